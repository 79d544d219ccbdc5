"""The dashboard's streaming against the scripted model, under the Procfile's gunicorn.

    python bench/bench_web.py [--turns 1000] [--readers 200] [--streams 32] [--browsers 4]
                              [--wire anthropic] [--only streams]

Prints, each figure beside its target:

1. first text through the API vs the moment it left the model server (<= 20 ms);
2. a whole streamed turn through the API vs the same stream read directly
   with the SDK (<= 1.05x);
3. N concurrent streaming turns vs one turn alone (<= 1.3x), beside the same
   streams read with the SDK without Hermes (the machine's own limit);
4. the gunicorn worker's resident memory after ``--turns`` turns and
   ``--readers`` reconnecting readers vs after the first 10 turns (< 50 MB).

The scripted server runs in its own process (so the bench's own threads do
not slow it down), paces its frames like a model producing tokens (frame n
leaves n * pace after the first, whatever the load), and notes when each
response's first text frame left; both processes read the same
system-wide monotonic clock.

The concurrent streams are read by ``--browsers`` client processes (32 streams
over 4 processes of 8 threads), as real browsers are separate machines: one
Python process reading 32 streams on 2 cores measures its own GIL, not the
server. One turn alone is read by one of those same processes with the same
reader, so alone and together do the same work per turn. Every figure is
printed with the machine's load average, since other work shares the cores.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes import llm_server
from tests.fakes.llm_server import DEFAULT_MODELS, FakeLLM, Reply
from tests.web.gunicorn_server import API_KEY, DashboardClient, GunicornServer

ANSWER = " ".join(f"word{n}" for n in range(200))  # about 1,200 characters, 150 frames


# ---- the scripted model, in a process of its own ------------------------------------


class BenchFake(FakeLLM):
    """The scripted server with bench knobs: when nothing is queued every request gets
    ``default``; frames leave ``pace`` seconds apart; the time each response's
    first text frame was flushed is kept (``GET /_bench/sent``)."""

    def __init__(self, port: int):
        super().__init__("127.0.0.1", port)
        self.default = Reply(text=ANSWER)
        self.pace = 0.0
        self.first_text_sent: list[float] = []

    def next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.default

    def record(self, request) -> None:
        pass  # a thousand turns' request bodies are not worth keeping

    def start(self) -> BenchFake:
        server = llm_server._Server(self._address, _BenchHandler)
        server.fake = self
        self._server = server
        self._port = server.server_address[1]
        # A thread per request, and a listen queue big enough for 32 at once.
        self._thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        return self


class _BenchHandler(llm_server._Handler):
    def do_GET(self) -> None:
        if self.path == "/_bench/sent":
            self._json(200, self.fake.first_text_sent)
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if self.path == "/_bench/config":
            length = int(self.headers.get("Content-Length") or 0)
            config = json.loads(self.rfile.read(length))
            self.fake.pace = config.get("pace", self.fake.pace)
            if "text" in config:
                self.fake.default = Reply(text=config["text"], chunk_size=config.get("chunk", 8))
            self.fake.first_text_sent.clear()
            self._json(200, {"ok": True})
        else:
            self._text_sent = False
            self._frame_count = 0
            self._first_frame_at = 0.0
            super().do_POST()

    def _chunk(self, data: bytes) -> None:
        if data and self.fake.pace:
            # Frame n leaves at first + n * pace, like a model's tokens: a late wake-up
            # on a busy machine does not push every later frame back.
            now = time.monotonic()
            if not self._frame_count:
                self._first_frame_at = now
            delay = self._first_frame_at + self._frame_count * self.fake.pace - now
            if delay > 0:
                time.sleep(delay)
            self._frame_count += 1
        super()._chunk(data)
        if data and not self._text_sent and (b'"text_delta"' in data or b'"content":"' in data):
            self._text_sent = True
            self.fake.first_text_sent.append(time.monotonic())


def _serve_fake(port: int) -> None:
    llm_server._Server.request_queue_size = 128
    BenchFake(port).start()
    threading.Event().wait()


class FakeProcess:
    def __init__(self) -> None:
        from tests.web.gunicorn_server import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = multiprocessing.get_context("spawn").Process(
            target=_serve_fake, args=(self.port,), daemon=True
        )

    def start(self) -> FakeProcess:
        self.process.start()
        for _ in range(300):
            try:
                httpx.get(self.url + "/_bench/sent", timeout=1)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("the scripted model server did not start")

    def configure(self, **config) -> None:
        httpx.post(self.url + "/_bench/config", json=config, timeout=10).raise_for_status()

    def first_text_sent(self) -> list[float]:
        return httpx.get(self.url + "/_bench/sent", timeout=10).json()

    def env(self, wire: str) -> dict[str, str]:
        fake = FakeLLM()
        fake._port = self.port  # only for its env(): the base URLs of this port
        return fake.env(wire, api_key=API_KEY)

    def stop(self) -> None:
        self.process.terminate()


# ---- browsers, in processes of their own ----------------------------------------------


def read_turn(http: httpx.Client, csrf: str, session_id: int) -> tuple[float, float, str]:
    """One streamed turn read as a browser's fetch reader would: each NDJSON line
    parsed as it arrives. Returns (first text arrived, done arrived, stop reason),
    as time.monotonic() values."""
    first = done = None
    stop_reason = ""
    path = f"/api/sessions/{session_id}/turns"
    headers = {"X-CSRF-Token": csrf}
    with http.stream("POST", path, json={"message": "hello"}, headers=headers) as response:
        assert response.status_code == 200, response.read()
        buffer = b""
        for chunk in response.iter_raw():
            at = time.monotonic()
            *lines, buffer = (buffer + chunk).split(b"\n")
            for raw in lines:
                event = json.loads(raw)
                if first is None and event["type"] == "text":
                    first = at
                elif event["type"] == "done":
                    done, stop_reason = at, event["stop_reason"]
    assert first is not None and done is not None, "the stream ended without text or done"
    return first, done, stop_reason


def _browser_process(url: str, fake_url: str, wire: str, conn) -> None:
    """A client machine: logs in once, then runs the jobs it is sent.

    ``("turns", session_ids, start_at)`` streams one turn per session, all at
    once from ``start_at``; ``("sdk", count, start_at)`` reads the scripted
    stream with the SDK ``count`` times at once. Answers the done times.
    """
    client = DashboardClient(url).login()
    conn.send("ready")
    while True:
        job = conn.recv()
        if job[0] == "stop":
            break
        kind, work, start_at = job
        time.sleep(max(start_at - time.monotonic(), 0))
        if kind == "turns":
            with ThreadPoolExecutor(len(work)) as pool:
                results = list(pool.map(lambda s: read_turn(client.http, client.csrf, s), work))
        else:
            with ThreadPoolExecutor(work) as pool:
                results = list(pool.map(lambda _: _sdk_done(fake_url, wire), range(work)))
        conn.send(results)
    client.close()


def _sdk_done(url: str, wire: str) -> tuple[float, float, str]:
    sdk_direct(url, wire)
    now = time.monotonic()
    return now, now, "end_turn"


class Browsers:
    """``count`` client processes that stream turns (or SDK reads) at the same moment."""

    def __init__(self, count: int, url: str, fake_url: str, wire: str):
        context = multiprocessing.get_context("spawn")
        self.links = []
        self.processes = []
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(
                target=_browser_process, args=(url, fake_url, wire, child), daemon=True
            )
            process.start()
            self.links.append(parent)
            self.processes.append(process)
        for link in self.links:
            if not link.poll(120) or link.recv() != "ready":
                raise SystemExit("a browser process did not start")

    def run(self, kind: str, work: list) -> float:
        """Seconds from the common start to the last stream's end; ``work[n]`` goes
        to process n (an empty share is skipped)."""
        start_at = time.monotonic() + 0.5  # every process is waiting by then
        busy = [(link, share) for link, share in zip(self.links, work, strict=False) if share]
        for link, share in busy:
            link.send((kind, share, start_at))
        results = [result for link, _ in busy for result in link.recv()]
        assert all(stop == "end_turn" for _, _, stop in results), results
        self.last = [(first - start_at, done - start_at) for first, done, _ in results]
        return max(done for _, done, _ in results) - start_at

    def turns(self, sessions: list[int]) -> float:
        """All ``sessions`` streaming a turn at once, spread evenly over the processes."""
        count = len(self.links)
        return self.run("turns", [sessions[n::count] for n in range(count)])

    def sdk_reads(self, streams: int) -> float:
        count = len(self.links)
        return self.run("sdk", [len(range(n, streams, count)) for n in range(count)])

    def stop(self) -> None:
        for link in self.links:
            link.send(("stop",))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.terminate()


def load() -> str:
    """The machine's load average (1, 5 min), printed beside every figure."""
    one, five, _ = os.getloadavg()
    return f"[load {one:.1f}, {five:.1f}]"


# ---- measurements ---------------------------------------------------------------------


def timed_turn(client, session_id: int, message: str = "hello") -> tuple[float, float, dict]:
    """(seconds to the first text line, seconds to done, the done event) of one API turn."""
    started = time.monotonic()
    first = None
    path = f"/api/sessions/{session_id}/turns"
    with client.open_stream("POST", path, json={"message": message}) as (stream, lines):
        assert stream.status == 200, stream.body
        for line in lines:
            if first is None and line.type == "text":
                first = line.at
            if line.type == "done":
                done = line.data
                ended = line.at
    return first - started, ended - started, done


def first_text_latency(client, fake: FakeProcess, runs: int) -> list[float]:
    """Milliseconds between the first text frame leaving the model and reaching the client."""
    gaps = []
    for _ in range(runs):
        fake.configure(pace=0.005)
        session = client.new_session()
        path = f"/api/sessions/{session}/turns"
        with client.open_stream("POST", path, json={"message": "hi"}) as (stream, lines):
            received = next(line.at for line in lines if line.type == "text")
            for _ in lines:
                pass
        sent = fake.first_text_sent()[0]
        gaps.append((received - sent) * 1000)
    return gaps


_sdk_clients: dict[tuple[str, str], object] = {}
_sdk_lock = threading.Lock()


def sdk_client(url: str, wire: str):
    """One SDK client per process and server, built once, as an application (and
    Hermes' own provider) keeps it: building one loads certificates and costs
    more CPU than a whole stream's reading."""
    with _sdk_lock:
        if (url, wire) not in _sdk_clients:
            if wire == "anthropic":
                import anthropic

                sdk = anthropic.Anthropic(api_key=API_KEY, base_url=url, max_retries=0)
            else:
                import openai

                sdk = openai.OpenAI(api_key=API_KEY, base_url=url + "/v1", max_retries=0)
            _sdk_clients[url, wire] = sdk
        return _sdk_clients[url, wire]


def sdk_direct(url: str, wire: str) -> float:
    """Seconds to read the scripted stream straight through the SDK."""
    sdk = sdk_client(url, wire)
    started = time.monotonic()
    if wire == "anthropic":
        events = sdk.messages.create(
            model=DEFAULT_MODELS[wire],
            max_tokens=1024,
            messages=[{"role": "user", "content": "hello"}],
            stream=True,
        )
    else:
        events = sdk.chat.completions.create(
            model=DEFAULT_MODELS[wire],
            messages=[{"role": "user", "content": "hello"}],
            stream=True,
        )
    for _ in events:  # the SDK's typed events, as an application reading it directly would
        pass
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--wire", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--pace", type=float, default=0.015, help="seconds between frames")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the concurrent streams")
    parser.add_argument(
        "--browsers", type=int, default=4, help="client processes the concurrent streams share"
    )
    parser.add_argument(
        "--embeddings",
        choices=("off", "fast", "local"),
        help="HERMES_EMBEDDINGS for the server (default: its own default, local MiniLM)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=("first-text", "whole-turn", "streams", "memory"),
        help="measure only this figure (repeatable), e.g. to repeat one taken under high load",
    )
    args = parser.parse_args()

    fake = FakeProcess().start()
    base = Path(tempfile.mkdtemp(prefix="bench-web-"))
    (base / "home").mkdir()
    (base / "workspace").mkdir()
    server = GunicornServer(
        base / "home", base / "workspace", fake.env(args.wire), GUNICORN_LOG_LEVEL="warning"
    )
    server.env["HERMES_STREAM_TIMEOUT"] = "120"
    if args.embeddings:
        server.env["HERMES_EMBEDDINGS"] = args.embeddings
    server.start()
    try:
        run(server, fake, args)
    finally:
        server.stop()
        fake.stop()


def run(server: GunicornServer, fake: FakeProcess, args) -> None:
    client = server.client()
    print(f"gunicorn from the Procfile, worker pid {server.worker_pid()}, wire {args.wire}")
    fake.configure(pace=0.0, text="warm up " * 20)
    for _ in range(3):
        timed_turn(client, client.new_session())
    sdk_direct(fake.url, args.wire)
    figures = {
        "first-text": first_text_figure,
        "whole-turn": whole_turn_figure,
        "streams": streams_figure,
        "memory": memory_figure,
    }
    for name in args.only or figures:
        figures[name](server, client, fake, args)
    client.close()


def first_text_figure(server: GunicornServer, client, fake: FakeProcess, args) -> None:
    """1. first text"""
    gaps = sorted(first_text_latency(client, fake, 20))
    print(
        f"first text: model -> client {statistics.median(gaps):.1f} ms median, "
        f"{gaps[int(len(gaps) * 0.95) - 1]:.1f} ms p95, over {len(gaps)} turns"
        f"   (target <= 20 ms)   {load()}"
    )


def whole_turn_figure(server: GunicornServer, client, fake: FakeProcess, args) -> None:
    """2. a whole streamed turn vs the SDK alone"""
    fake.configure(pace=args.pace, text=ANSWER)
    api = statistics.median(timed_turn(client, client.new_session())[1] for _ in range(5))
    direct = statistics.median(sdk_direct(fake.url, args.wire) for _ in range(5))
    print(
        f"whole turn: API {api:.3f} s vs SDK directly {direct:.3f} s = {api / direct:.3f}x"
        f"   (target <= 1.05x)   {load()}"
    )


def streams_figure(server: GunicornServer, client, fake: FakeProcess, args) -> None:
    """3. many streams at once vs one alone, in rounds (the machine's load varies)"""
    fake.configure(pace=args.pace, text=ANSWER)
    browsers = Browsers(args.browsers, server.url, fake.url, args.wire)
    ratios, controls = [], []
    try:
        # Each process's first SDK read imports the SDK (seconds of CPU): not part of a stream.
        browsers.turns([client.new_session() for _ in range(args.browsers)])
        browsers.sdk_reads(args.browsers)
        for _ in range(args.rounds):
            alone = statistics.median(browsers.turns([client.new_session()]) for _ in range(3))
            together = browsers.turns([client.new_session() for _ in range(args.streams)])
            firsts = sorted(first for first, _ in browsers.last)
            dones = sorted(done for _, done in browsers.last)
            ratios.append(together / alone)
            # The same streams without Hermes: what this machine and the scripted server do.
            sdk_alone = statistics.median(browsers.sdk_reads(1) for _ in range(3))
            sdk_together = browsers.sdk_reads(args.streams)
            controls.append(sdk_together / sdk_alone)
            print(
                f"  {args.streams} streams at once: all done in {together:.3f} s vs one alone"
                f" {alone:.3f} s = {together / alone:.3f}x; without Hermes {sdk_together:.3f} s"
                f" vs {sdk_alone:.3f} s = {sdk_together / sdk_alone:.3f}x   {load()}"
            )
            # Where a slow round lost its time: the turns' start (first text) or their stream.
            print(
                f"    first text after {firsts[0]:.2f}-{firsts[-1]:.2f} s (median"
                f" {statistics.median(firsts):.2f}), done after {dones[0]:.2f}-{dones[-1]:.2f} s"
                f" (median {statistics.median(dones):.2f})"
            )
    finally:
        browsers.stop()
    print(
        f"{args.streams} streams at once vs one alone: {statistics.median(ratios):.3f}x median of"
        f" {args.rounds} rounds   (target <= 1.3x); control without Hermes, {args.streams} SDK"
        f" readers over {args.browsers} processes: {statistics.median(controls):.3f}x"
        f" (this machine's own limit)   {load()}"
    )


def memory_figure(server: GunicornServer, client, fake: FakeProcess, args) -> None:
    """4. memory over many turns and reconnecting readers"""
    fake.configure(pace=0.0, text="a short answer " * 20)
    sessions = [client.new_session() for _ in range(32)]  # most turns continue one of these
    done_turns: list[str] = []
    lock = threading.Lock()

    def one_turn(n: int) -> None:
        session = sessions[n % len(sessions)] if n % 3 else client.new_session()
        _, _, done = timed_turn(client, session, f"turn {n}")
        with lock:
            done_turns.append(done["turn_id"])

    def one_reader() -> None:
        with lock:
            turn_id = random.choice(done_turns)
        path = f"/api/turns/{turn_id}/events"
        with client.open_stream("GET", path, params={"after": random.randint(0, 3)}) as (s, lines):
            if s.status == 200:
                next(lines, None)  # read a line, then hang up (a reload, a lost connection)

    for n in range(10):
        one_turn(n)
    cold = server.rss_bytes()
    # The server loads its embedding model once, when the background indexer first wakes
    # (3 s after the first message): a one-time cost, not growth. Wait for it to settle.
    before, settled_at = settle(server)
    readers_every = max((args.turns - 10) // max(args.readers, 1), 1)
    readers = 0
    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        futures = []
        for n in range(10, args.turns):
            futures.append(pool.submit(one_turn, n))
            if n % readers_every == 0 and readers < args.readers:
                futures.append(pool.submit(one_reader))
                readers += 1
        for future in futures:
            future.result()
    after = server.rss_bytes()
    mb = 1024 * 1024
    print(
        f"memory: worker RSS {cold / mb:.1f} MB right after 10 turns, {before / mb:.1f} MB once"
        f" settled ({settled_at:.0f} s later), {after / mb:.1f} MB after"
        f" {args.turns} turns and {readers} reconnecting readers = {(after - before) / mb:+.1f} MB"
        f" in {time.monotonic() - started:.0f} s   (target < 50 MB)   {load()}"
    )
    # The background indexer defers to running turns, so the answers' vectors are made once
    # the turns are over: measure again when it has caught up, which is the server's real size.
    waited, pending = wait_indexed(server.home / "hermes.db")
    if waited:
        caught_up = server.rss_bytes()
        print(
            f"memory: after the indexer caught up ({waited:.0f} s, {pending} left unembedded)"
            f" {caught_up / mb:.1f} MB = {(caught_up - before) / mb:+.1f} MB   {load()}"
        )


def wait_indexed(database: Path, at_most: float = 900.0) -> tuple[float, int]:
    """Seconds until the server's vector space has no message left to embed (0 with
    embeddings off: no space exists), and how many were still pending then."""
    from sqlalchemy import text

    from hermes.store import indexer
    from hermes.store.engine import make_engine, read_transaction

    started = time.monotonic()
    engine = make_engine(f"sqlite:///{database}", read_only=True)
    try:
        with read_transaction(engine) as connection:
            space = connection.execute(text("SELECT max(id) FROM embedding_spaces")).scalar()
        if space is None:
            return 0.0, 0
        while True:
            pending = indexer.pending_count(engine, space)
            if not pending or time.monotonic() - started > at_most:
                return time.monotonic() - started, pending
            time.sleep(2.0)
    finally:
        engine.dispose()


def settle(server, *, at_least: float = 5.0, at_most: float = 60.0) -> tuple[int, float]:
    """(the worker's RSS once it stops changing, seconds waited): at least ``at_least``
    seconds, then until two samples a second apart are within 1 MB."""
    started = time.monotonic()
    time.sleep(at_least)
    last = server.rss_bytes()
    while time.monotonic() - started < at_most:
        time.sleep(1.0)
        now = server.rss_bytes()
        if abs(now - last) < 1024 * 1024:
            return now, time.monotonic() - started
        last = now
    return last, time.monotonic() - started


if __name__ == "__main__":
    main()
