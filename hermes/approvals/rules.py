"""The rules: which commands are dangerous (ask first) and which are forbidden (never run).

``RULES`` below is the whole policy, one line per rule: the program it is
about, when it applies, how bad it is and the reason the user is shown. The
classifier (``classify.py``) parses the command, unwraps ``sudo``/``env``/
``bash -c``/``xargs``..., and for every simple command it finds asks each rule
for that program whether it applies. A few rules are about how commands are
put together rather than about one program (a download piped into a shell, a
redirect into ``/etc``, a fork bomb); they are listed in ``STRUCTURAL`` with
their reason and checked by the classifier itself.

Users extend the table with allow and deny globs in ``$HERMES_HOME/approvals.rules``
(see ``userrules.py``).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from hermes.approvals.paths import ROOT_FOLDERS, PathJudge, Place

Level = Literal["safe", "dangerous", "forbidden"]
SAFE: Level = "safe"
DANGEROUS: Level = "dangerous"
FORBIDDEN: Level = "forbidden"
LEVELS = {SAFE: 0, DANGEROUS: 1, FORBIDDEN: 2}


@dataclass
class Use:
    """One program run with its arguments, as a rule sees it."""

    program: str  # basename: /bin/rm and \\rm are both "rm"
    args: tuple[str, ...]
    paths: PathJudge
    cwd: str | None
    stdin: str | None  # text fed to it, when known (heredoc, echo ... |)
    _places: list[Place] | None = field(default=None, repr=False)

    def operands(self) -> list[str]:
        """The arguments that are not options (everything after ``--`` counts)."""
        found, options_done = [], False
        for arg in self.args:
            if arg == "--" and not options_done:
                options_done = True
            elif options_done or not arg.startswith("-") or arg == "-":
                found.append(arg)
        return found

    def places(self) -> list[Place]:
        """Where the operands point (worked out once: several rules ask)."""
        if self._places is None:
            self._places = [self.paths.place(arg, self.cwd) for arg in self.operands()]
        return self._places


Test = Callable[[Use], bool]


# -- the building blocks the table uses ------------------------------------------


def always(use: Use) -> bool:
    return True


def flag(*names: str) -> Test:
    """Any of the options: single letters match inside clusters (``-rf``), ``--long`` exactly."""
    letters = {n for n in names if len(n) == 1}
    longs = {n for n in names if n.startswith("--")}

    def test(use: Use) -> bool:
        for arg in use.args:
            if arg == "--":
                return False
            if arg.startswith("--"):
                if arg.split("=", 1)[0] in longs:
                    return True
            elif arg.startswith("-") and len(arg) > 1 and letters & set(arg[1:]):
                return True
        return False

    return test


def sub(*names: str, then: Test = always) -> Test:
    """The first operand (the subcommand: ``git push``, ``apt install``) is one of ``names``."""

    def test(use: Use) -> bool:
        operands = _subcommand_words(use)
        return bool(operands) and operands[0] in names and then(use)

    return test


def arg(pattern: str) -> Test:
    """Some argument matches the regular expression (searched, case-insensitive)."""
    regex = re.compile(pattern, re.IGNORECASE)
    return lambda use: any(regex.search(a) for a in use.args)


def text(pattern: str) -> Test:
    """The arguments or the text fed on stdin match the regular expression."""
    regex = re.compile(pattern, re.IGNORECASE)
    return lambda use: bool(regex.search(" ".join(use.args) + "\n" + (use.stdin or "")))


def target(kind: str) -> Test:
    """Some operand is a path of that kind (see :class:`PathJudge`)."""

    def test(use: Use) -> bool:
        judge = getattr(use.paths, f"is_{kind}")
        return any(judge(place) for place in use.places())

    return test


_GLOB = re.compile(r"[*?[]")
_EMPTY_ABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$[@*#?!0-9-]|[*?]")


_POSIX_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
    "word": "a-zA-Z0-9_",
    "graph": "!-~",
    "print": " -~",
    "punct": "!-/:-@",
    "space": " ",
    "blank": " ",
}


def _glob_regex(pattern: str) -> re.Pattern | None:
    """A shell glob as a regular expression over whole paths (``*`` stops at ``/``)."""
    for name, chars in _POSIX_CLASSES.items():
        pattern = pattern.replace(f"[:{name}:]", chars)
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            close = pattern.find("]", i + 2)
            if close < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : close]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                # Every character literal except the '-' of a range (a-z).
                inner = "".join(
                    c if c == "-" and 0 < j < len(body) - 1 else re.escape(c)
                    for j, c in enumerate(body)
                )
                out.append("[" + ("^" if negate else "") + inner + "]")
                i = close
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return None


def catastrophic_glob(use: Use) -> bool:
    """A glob operand that matches the root, a system folder or home: ``/[a-z]*``, ``/hom?``.

    Also an operand that is one of those folders followed only by expansions
    that may be empty (``/$X``, ``~/${DIR}*``): with the variable unset, it is
    the folder itself.
    """
    home = use.paths.home
    targets = ROOT_FOLDERS | {home, posixpath.dirname(home)}
    for word in use.operands():
        if _GLOB.search(word):
            place = use.paths.place(word, use.cwd)
            if place.known:
                regex = _glob_regex(place.path)
                if regex is not None and any(regex.fullmatch(t) for t in targets):
                    return True
        literal = word.replace("${HOME}", "$HOME")
        if literal.startswith(("/", "~", "$HOME")) and ("$" in literal[1:] or _GLOB.search(word)):
            prefix = "$HOME" if literal.startswith("$HOME") else literal[0]
            stripped = prefix + _EMPTY_ABLE.sub("", literal[len(prefix) :])
            guarded = re.search(r"\$\{\w+:?\?", word)
            empty_able = stripped != literal and stripped.rstrip("/") in ("", "~", "$HOME")
            place = use.paths.place(stripped, use.cwd)
            if empty_able and not guarded and use.paths.is_catastrophic(place):
                return True
    return False


def last_target(kind: str) -> Test:
    """The last operand (where ``cp``/``rsync`` write) is a path of that kind."""

    def test(use: Use) -> bool:
        places = use.places()
        return bool(places) and getattr(use.paths, f"is_{kind}")(places[-1])

    return test


def sources(kind: str) -> Test:
    """Some operand but the last (what ``mv`` moves away) is a path of that kind."""

    def test(use: Use) -> bool:
        judge = getattr(use.paths, f"is_{kind}")
        if "-t" in use.args or any(a.startswith("--target-directory") for a in use.args):
            return any(judge(p) for p in use.places()[1:])
        return any(judge(p) for p in use.places()[:-1])

    return test


SECRET_HOME_FOLDERS = (".ssh", ".gnupg", ".aws", ".kube", ".docker", ".netrc", ".git-credentials")


def secret_sources(use: Use) -> bool:
    """Some operand but the last is in a folder of keys or credentials in the home folder."""
    home = use.paths.home
    for place in use.places()[:-1]:
        if place.known and any(
            place.path == f"{home}/{name}" or place.path.startswith(f"{home}/{name}/")
            for name in SECRET_HOME_FOLDERS
        ):
            return True
    return False


# awk programs that start commands: system(), print | "cmd", "cmd" | getline, |&.
_AWK_RUNS = re.compile(
    r"\bsystem\s*\(|\bprintf?\b[^;}]*\||\|\s*&?\s*getline|\|&|@load|\bextension\s*\("
)
_AWK_WRITES = re.compile(r"\bprintf?\b[^;}]*>|\bfflush\b.*>")


def awk_program(use: Use) -> str:
    """The awk program text: ``-e``/``--source`` values, else the first operand."""
    args, found, i = list(use.args), [], 0
    takes_value = {"-F", "-v", "-f", "--file", "--field-separator", "--assign", "-i", "--include"}
    first = None
    while i < len(args):
        a = args[i]
        if a in ("-e", "--source") and i + 1 < len(args):
            found.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--source="):
            found.append(a.split("=", 1)[1])
        elif a in takes_value:
            i += 1
        elif a == "--":
            first = first if first is not None else (args[i + 1] if i + 1 < len(args) else None)
            break
        elif not a.startswith("-") and first is None:
            first = a
        i += 1
    if not found and first is not None and not any(a in ("-f", "--file") for a in args):
        found.append(first)
    return "\n".join(found)


def awk_runs(use: Use) -> bool:
    text = awk_program(use)
    return bool(
        _AWK_RUNS.search(text)
        or _AWK_WRITES.search(text)
        or any(a in ("-f", "--file", "-i", "--include", "-l", "--load") for a in use.args)
    )


# git configuration whose value is a command git runs (or a file of such settings).
_GIT_COMMAND_KEYS = re.compile(
    r"^(core\.(sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|sequence\.editor"
    r"|diff\.external|diff\..*\.(textconv|command)|merge\..*\.driver|filter\.|credential\."
    r"|gpg\.|pager\.|uploadpack\.|protocol\.|remote\..*\.(uploadpack|receivepack)|include"
    r"|interactive\.difffilter|init\.templatedir|web\.browser|browser\.|man\.|mergetool\."
    r"|difftool\.|core\.sshcommand)",
    re.IGNORECASE,
)


def git_settings(use: Use) -> list[tuple[str, str]]:
    """``-c key=value`` options and ``git config key value`` settings."""
    args, found = list(use.args), []
    for i, a in enumerate(args):
        if a == "-c" and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            found.append((key, value))
        elif a.startswith("--config-env="):
            found.append((a.split("=", 2)[1], "$"))
    words = _subcommand_words(use)
    if words[:1] == ["config"]:
        rest = [w for w in words[1:] if w not in ("set", "add")]
        if rest:
            found.append((rest[0], rest[1] if len(rest) > 1 else ""))
    return found


def git_runs_command(use: Use) -> bool:
    """git told to run a command: an ``!alias``, a command-valued setting, ``--upload-pack``..."""
    for key, value in git_settings(use):
        if value.startswith("!") or _GIT_COMMAND_KEYS.match(key):
            return True
    words = _subcommand_words(use)
    if (
        any(re.match(r"--(upload-pack|receive-pack|exec)\b|-u$", a) for a in use.args)
        and words[:1]
        and words[0] in ("clone", "fetch", "pull", "ls-remote", "push", "archive")
    ):
        return True
    if any(a.startswith("ext::") or a.startswith("fd::") for a in use.args):
        return True
    return bool(
        words
        and (
            words[:2] == ["bisect", "run"]
            or words[:2] == ["submodule", "foreach"]
            or (
                words[0] == "rebase"
                and any(a in ("-x", "--exec") or a.startswith("--exec=") for a in use.args)
            )
            or (
                words[0] == "difftool"
                and any(a in ("-x", "--extcmd") or a.startswith("--extcmd=") for a in use.args)
            )
            or (
                words[0] == "grep"
                and any(a.startswith(("-O", "--open-files-in-pager")) for a in use.args)
            )
        )
    )


def tar_runs_command(use: Use) -> bool:
    return any(
        re.match(
            r"--(checkpoint-action=exec|to-command|rsh-command|info-script|new-volume-script)", a
        )
        or a in ("-F", "--info-script", "--new-volume-script", "--to-command", "--rsh-command")
        for a in use.args
    )


_SSH_LOCAL = re.compile(r"(proxycommand|localcommand|permitlocalcommand|knownhostscommand)", re.I)


def ssh_runs(use: Use) -> bool:
    """ssh that runs something: a remote command or login, or a local ProxyCommand."""
    if any(_SSH_LOCAL.search(a) for a in use.args):
        return True
    return not all(a in ("-V", "-G", "-Q") or a.startswith("-Q") for a in use.args) or not use.args


_DOCKER_HOST = re.compile(
    r"^(-v|--volume|--mount|--privileged|--pid|--net|--network|--ipc|--uts|--userns|--device"
    r"|--cap-add|--security-opt|-v\S)",
)


def docker_reaches_host(use: Use) -> bool:
    """A container that can touch the host: bind mounts, --privileged, host namespaces."""
    words = _subcommand_words(use)
    if (
        not words
        or words[0] not in ("run", "create")
        and words[:2]
        not in (
            ["container", "run"],
            ["container", "create"],
        )
    ):
        return False
    return any(_DOCKER_HOST.match(a) for a in use.args)


def unknown_target(use: Use) -> bool:
    """Some operand's path depends on a variable or substitution."""
    return any(not place.known for place in use.places())


def all_of(*tests: Test) -> Test:
    return lambda use: all(t(use) for t in tests)


def any_of(*tests: Test) -> Test:
    return lambda use: any(t(use) for t in tests)


def dd_writes(kind: str) -> Test:
    """``dd of=PATH`` where PATH is of that kind."""

    def test(use: Use) -> bool:
        judge = getattr(use.paths, f"is_{kind}")
        return any(judge(use.paths.place(a[3:], use.cwd)) for a in use.args if a.startswith("of="))

    return test


def mkfs_mounted(use: Use) -> bool:
    return any(use.paths.is_mounted_disk(place) for place in use.places())


def kills_foreign(use: Use) -> bool:
    """``kill`` aimed at init, every process (-1), a process group, or another user's process."""
    args = list(use.args)
    if any(a in ("-l", "-L", "--list") for a in args):
        return False  # lists signal names
    targets: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-s", "-n", "--signal"):
            i += 2
            continue
        if a == "--":
            targets += args[i + 1 :]
            break
        if a.startswith("-") and not targets and i < len(args) - 1:
            i += 1  # a signal: -9, -KILL
            continue
        targets.append(a)
        i += 1
    for t in targets:
        if t.startswith("%"):
            continue  # a job of this shell
        if not re.fullmatch(r"-?\d+", t):
            return True  # a pid from a substitution or variable: unknown
        pid = int(t)
        if pid <= 1:
            return True  # init, every process, or a process group
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid():
                return True
        except OSError:
            pass  # no such process: kill will say so
    return False


# -- the table -------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    id: str
    programs: tuple[str, ...]
    level: Level
    when: Test
    reason: str


def rule(rule_id: str, programs: str, level: Level, when: Test, reason: str) -> Rule:
    return Rule(rule_id, tuple(programs.split()), level, when, reason)


RECURSIVE = flag("r", "R", "--recursive")
SHELLS = "sh bash dash zsh ksh mksh fish ash busybox"
MKFS = "mkfs mkfs.ext2 mkfs.ext3 mkfs.ext4 mkfs.xfs mkfs.btrfs mkfs.vfat mkfs.fat mkfs.ntfs mkswap"
DB_CLIENTS = "psql mysql mariadb sqlite3 duckdb mongo mongosh cqlsh clickhouse-client sqlcmd"
DESTRUCTIVE_SQL = (
    r"\b(drop\s+(table|database|schema|index|view|user)|truncate\b|delete\s+from\s+\S+\s*(;|$|\n))"
)

# fmt: off
# One rule a line or two: id, programs, level, when it applies, the reason shown.
RULES: tuple[Rule, ...] = (
    # Deleting.
    rule("delete-root", "rm", FORBIDDEN,
         all_of(RECURSIVE, any_of(target("catastrophic"), catastrophic_glob)),
         "deletes the whole file system, a system folder or your home folder"),
    rule("delete-root", "mv", FORBIDDEN, sources("catastrophic"),
         "moves the whole file system, a system folder or your home folder away"),
    rule("delete-root", "rsync", FORBIDDEN, all_of(arg(r"^--(delete|remove-source)"),
                                                   last_target("catastrophic")),
         "deletes the contents of the file system, a system folder or your home folder"),
    rule("move-sensitive", "mv", DANGEROUS, sources("sensitive"),
         "moves shell startup files, ~/.ssh, /etc or crontabs away"),
    rule("delete-outside", "mv", DANGEROUS, sources("outside_workspace"),
         "moves something away from outside the workspace"),
    rule("copy-secrets", "cp scp rsync", DANGEROUS, secret_sources,
         "copies keys or credentials out of ~/.ssh, ~/.gnupg, ~/.aws or ~/.kube"),
    rule("delete-root", "rm", FORBIDDEN, flag("--no-preserve-root"),
         "turns off rm's protection of the root folder"),
    rule("recursive-delete", "rm", DANGEROUS, RECURSIVE, "deletes folders recursively"),
    rule("forced-delete", "rm", DANGEROUS, flag("f", "--force"), "forces deletion without asking"),
    rule("delete-outside", "rm rmdir unlink", DANGEROUS, target("outside_workspace"),
         "deletes something outside the workspace"),
    rule("shred", "shred wipe srm", DANGEROUS, always, "destroys file contents beyond recovery"),
    rule("delete-root", "find", FORBIDDEN,
         all_of(target("catastrophic"), any_of(arg(r"^-delete$"), text(r"-exec\S*\s+rm\b"))),
         "deletes the whole file system, a system folder or your home folder"),
    rule("find-delete", "find", DANGEROUS, arg(r"^-delete$"), "deletes every file find matches"),
    # Disks.
    rule("block-device-write", "dd", FORBIDDEN, dd_writes("block_device"),
         "writes straight onto a disk device"),
    rule("mkfs-mounted", MKFS, FORBIDDEN, mkfs_mounted, "formats a disk that is in use"),
    rule("disk-tool", "dd", DANGEROUS, always, "dd copies raw bytes and can overwrite anything"),
    rule("disk-tool", MKFS + " fdisk sfdisk cfdisk gdisk sgdisk parted wipefs blkdiscard losetup",
         DANGEROUS, always, "formats or repartitions a disk"),
    # Permissions.
    rule("chmod-root", "chmod chown chgrp", FORBIDDEN,
         all_of(RECURSIVE, any_of(target("catastrophic"), catastrophic_glob)),
         "changes permissions of the whole file system, a system folder or your home folder"),
    rule("recursive-chmod", "chmod chown chgrp", DANGEROUS,
         all_of(RECURSIVE, any_of(target("outside_workspace"), unknown_target)),
         "changes permissions recursively outside the workspace"),
    rule("chmod-outside", "chmod chown chgrp chattr", DANGEROUS, target("sensitive"),
         "changes permissions of system or login files"),
    # Becoming someone else.
    rule("sudo", "sudo su doas pkexec run0", DANGEROUS, always,
         "runs a command as another user (usually root)"),
    # Scheduled jobs, services, the machine.
    rule("crontab", "crontab", DANGEROUS, any_of(flag("e", "r"), lambda u: bool(u.operands())),
         "changes your scheduled jobs (crontab)"),
    rule("crontab", "at batch", DANGEROUS, always, "schedules a command to run later"),
    rule("service", "systemctl service launchctl", DANGEROUS,
         sub("start", "stop", "restart", "reload", "enable", "disable", "mask", "kill",
             "daemon-reload", "isolate", "poweroff", "reboot", "load", "unload", "bootout"),
         "starts, stops or changes system services"),
    rule("power", "shutdown reboot halt poweroff init telinit", DANGEROUS, always,
         "shuts down or restarts the machine"),
    # Processes.
    rule("kill-foreign", "kill", DANGEROUS, kills_foreign,
         "signals init, every process, or a process of another user"),
    rule("kill-by-name", "pkill killall killall5 skill", DANGEROUS, always,
         "kills every process that matches a name, other users' included"),
    # Git history.
    rule("git-force-push", "git", DANGEROUS,
         sub("push", then=any_of(flag("f", "d", "--force", "--force-with-lease", "--mirror",
                                      "--force-if-includes", "--delete"), arg(r"^\+|^:"))),
         "rewrites or deletes history on the remote (force push)"),
    rule("git-reset-hard", "git", DANGEROUS, sub("reset", then=flag("--hard", "--merge", "--keep")),
         "throws away uncommitted changes (git reset --hard)"),
    rule("git-clean", "git", DANGEROUS, sub("clean", then=flag("f", "--force")),
         "deletes untracked files (git clean)"),
    rule("git-discard", "git", DANGEROUS,
         any_of(sub("branch", then=flag("D")), sub("stash", then=arg(r"^(drop|clear)$")),
                sub("checkout", then=any_of(flag("f", "--force"), arg(r"^\.$"))),
                sub("restore", then=lambda u: "--staged" not in u.args),
                sub("filter-branch", "filter-repo"), sub("reflog", then=arg(r"^(expire|delete)$"))),
         "throws away branches, stashes, changes or history"),
    # Installing software.
    rule("package-install", "apt apt-get aptitude dnf yum zypper apk brew port snap flatpak "
         "emerge pkg", DANGEROUS,
         sub("install", "remove", "purge", "uninstall", "add", "del", "upgrade", "dist-upgrade",
             "full-upgrade", "autoremove", "reinstall", "erase"),
         "installs or removes system packages"),
    rule("package-install", "nix-env", DANGEROUS,
         flag("i", "e", "u", "--install", "--uninstall", "--upgrade"), "installs or removes packages"),
    rule("package-install", "pacman", DANGEROUS, arg(r"^-[SRU]"), "installs or removes packages"),
    rule("package-install", "dpkg rpm", DANGEROUS,
         flag("i", "r", "P", "e", "U", "--install", "--remove", "--purge", "--erase"),
         "installs or removes packages"),
    rule("package-install", "pip pip3 pipx uv conda mamba micromamba poetry pdm", DANGEROUS,
         any_of(sub("install", "uninstall", "add", "remove", "upgrade", "reinstall", "sync",
                    "download", "wheel"),
                sub("pip", then=arg(r"^(install|uninstall)$"))),
         "installs packages (their install scripts run code)"),
    rule("package-install", "npm pnpm yarn bun gem cargo go composer", DANGEROUS,
         sub("install", "i", "add", "ci", "uninstall", "remove", "rm", "global", "update", "up",
             "upgrade"),
         "installs packages (their install scripts run code)"),
    # Databases.
    rule("sql-destructive", DB_CLIENTS, DANGEROUS, text(DESTRUCTIVE_SQL),
         "drops, truncates or empties database tables"),
    rule("sql-destructive", "redis-cli", DANGEROUS, text(r"\b(flushall|flushdb)\b"),
         "deletes every key in the database"),
    rule("sql-destructive", "dropdb dropuser mysqladmin", DANGEROUS,
         lambda u: u.program != "mysqladmin" or "drop" in u.args,
         "deletes a database or a database user"),
    # Programs that run other commands or code the classifier cannot follow.
    rule("awk-exec", "awk gawk mawk nawk", DANGEROUS, awk_runs,
         "the awk program runs shell commands or writes files"),
    rule("git-exec", "git", DANGEROUS, git_runs_command,
         "git is told to run a command (an ! alias, a hook, pager, ssh or helper setting)"),
    rule("tar-exec", "tar", DANGEROUS, tar_runs_command, "tar is told to run a command"),
    rule("remote-exec", "ssh", DANGEROUS, ssh_runs,
         "runs a command on another machine (or a local ProxyCommand)"),
    rule("runs-command", "strace ltrace gdb script tmux screen vim vi nvim ex view emacs "
         "parallel sem systemd-run nsenter chroot runuser sg expect", DANGEROUS,
         lambda u: u.program not in ("tmux", "screen", "script", "vim", "vi", "nvim", "view",
                                     "emacs", "ex") or tool_runs_command(u),
         "runs another command or editor commands that can run shell commands"),
    rule("container-host", "docker podman nerdctl", DANGEROUS, docker_reaches_host,
         "starts a container that can reach the host (mounts, --privileged, host namespaces)"),
    rule("container-exec", "docker podman nerdctl kubectl", DANGEROUS,
         any_of(sub("exec"), sub("system", "volume", "container", "image", "builder",
                                 then=arg(r"^(prune|rm)$"))),
         "runs a command in a container, or deletes containers, images or volumes"),
    rule("download-exec", "npx bunx pnpx uvx", DANGEROUS, always,
         "downloads a package and runs it"),
    rule("download-exec", "pipx pnpm", DANGEROUS, sub("run", "dlx"),
         "downloads a package and runs it"),
    rule("mount", "mount umount", DANGEROUS, lambda u: bool(u.operands()) or "-a" in u.args,
         "mounts or unmounts file systems"),
    rule("chmod-outside", "chattr", DANGEROUS, any_of(RECURSIVE, target("outside_workspace")),
         "changes file attributes outside the workspace"),
    # Hermes' own data folder (HERMES_HOME): settings, keys, database, approval rules.
    rule("hermes-home", "rm rmdir unlink mv chmod chown chgrp chattr truncate shred touch ln",
         DANGEROUS, target("hermes_data"),
         "changes Hermes' own settings, keys, database or approvals (HERMES_HOME)"),
    rule("read-hermes-home", "grep egrep fgrep", DANGEROUS,
         all_of(flag("r", "R", "--recursive", "--dereference-recursive"),
                target("above_hermes_home")),
         "searches a folder holding Hermes' data folder, its keys included"),
    rule("read-hermes-home", "rg", DANGEROUS,
         all_of(any_of(flag("--hidden"), arg(r"^-uu+$")), target("above_hermes_home")),
         "searches a folder holding Hermes' data folder, its keys included"),
    rule("read-hermes-home", "tar zip 7z rsync", DANGEROUS, target("above_hermes_home"),
         "copies a folder holding Hermes' data folder, its keys included"),
    rule("read-hermes-home", "cp scp", DANGEROUS,
         all_of(flag("r", "R", "a", "--recursive", "--archive"), target("above_hermes_home")),
         "copies a folder holding Hermes' data folder, its keys included"),
    # Firewalls.
    rule("firewall", "iptables ip6tables nft ufw firewall-cmd", DANGEROUS, always,
         "changes the firewall"),
)
# fmt: on

_TOOL_RUNS = {
    "tmux": re.compile(
        r"^(new|new-session|new-window|neww|split-window|splitw|respawn-pane|respawnp"
        r"|respawn-window|respawnw|run-shell|run|send-keys|send|if-shell|if"
        r"|pipe-pane|pipep|display-popup|popup|source-file|source)$"
    ),
    "screen": re.compile(r"^-(d?m|[dD]m\S*|X|\S*m\S*)$"),
}


def tool_runs_command(use: Use) -> bool:
    """tmux/screen starting a command, ``script -c``, an editor told to run commands."""
    if use.program == "tmux":
        return any(_TOOL_RUNS["tmux"].match(a) for a in use.args)
    if use.program == "screen":
        return any(_TOOL_RUNS["screen"].match(a) for a in use.args)
    if use.program == "script":
        return any(a in ("-c", "--command") or re.fullmatch(r"-[a-zA-Z]*c", a) for a in use.args)
    # Editors: -c/--cmd/+cmd/-S/-s run editor (and so shell) commands; emacs --eval/-l/--batch.
    return (
        any(
            re.match(
                r"^(-c|--cmd|\+|-S|-s|--eval|-l|--load|--batch|-batch|--script|-x|-f|--funcall)", a
            )
            for a in use.args
        )
        or use.stdin is not None
    )


# Rules about how commands are combined; the classifier checks these itself.
STRUCTURAL: dict[str, tuple[Level, str]] = {
    "fork-bomb": (FORBIDDEN, "is a fork bomb: it multiplies processes until the machine stalls"),
    "block-device-write": (FORBIDDEN, "writes straight onto a disk device"),
    "download-exec": (DANGEROUS, "runs a script downloaded from the network"),
    "pipe-to-shell": (DANGEROUS, "runs text from a pipe as a script"),
    "encoded-script": (DANGEROUS, "runs encoded (base64/hex) text as a script"),
    "eval": (DANGEROUS, "runs a command built from a string (eval, bash -c, source)"),
    "xargs-exec": (DANGEROUS, "runs a command on every input line (xargs, find -exec)"),
    "dynamic-command": (DANGEROUS, "the program to run is only known when the shell runs it"),
    "write-sensitive": (DANGEROUS, "writes to shell startup files, ~/.ssh, /etc or crontabs"),
    "write-outside": (DANGEROUS, "overwrites a file outside the workspace"),
    "inline-code": (DANGEROUS, "runs inline code that deletes files or starts programs"),
    "unparsed": (DANGEROUS, "could not be parsed reliably, so it cannot be checked"),
    "too-deep": (DANGEROUS, "nests commands too deeply to check"),
    "sed-exec": (DANGEROUS, "the sed script runs shell commands (the e command or flag)"),
    "script-file": (
        DANGEROUS,
        "runs a script that does not exist yet, cannot be read, or is "
        "written by the same command line, so it cannot be checked",
    ),
    "program-file": (
        DANGEROUS,
        "runs a program from the workspace whose behaviour cannot be checked",
    ),
    "env-command": (
        DANGEROUS,
        "sets a variable that makes the program run another command "
        "(LD_PRELOAD, GIT_SSH_COMMAND, PAGER, BASH_ENV ...)",
    ),
    "user-deny": (FORBIDDEN, "matches a deny rule in your approvals.rules"),
    "write-hermes-home": (
        DANGEROUS,
        "writes into Hermes' own settings, keys, database or approvals (HERMES_HOME)",
    ),
    "read-hermes-secret": (
        DANGEROUS,
        "reads Hermes' secrets (its .env with API keys, secret_key or database)",
    ),
    "read-process-secrets": (
        DANGEROUS,
        "reads a process's environment or memory (/proc/PID/environ), where Hermes' keys are",
    ),
    "write-dotenv": (
        DANGEROUS,
        "writes a .env file, which sets variables for the programs started in its folder",
    ),
}

# Programs that only read: running them through xargs or find -exec is harmless.
READ_ONLY = frozenset(
    [
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ls",
        "stat",
        "file",
        "du",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "echo",
        "printf",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "test",
        "[",
        "true",
        "false",
        "diff",
        "cmp",
        "sort",
        "uniq",
    ]
)

# Wrappers that run the rest of their arguments as a command: options they take
# that consume a value, so the classifier can find where the command starts.
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "-n", "-p", "-t"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "unbuffer": frozenset(),
    "chronic": frozenset(),
    "torsocks": frozenset(),
    "proxychains": frozenset(),
    "busybox": frozenset(),
    "sudo": frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-C",
            "-D",
            "--chdir",
            "-r",
            "-t",
            "-U",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"--user", "-u"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "strace": frozenset(
        {
            "-o",
            "-e",
            "-p",
            "-s",
            "-u",
            "-E",
            "-a",
            "-b",
            "-I",
            "-O",
            "-S",
            "-P",
            "-X",
            "--output",
            "--trace",
            "--signal",
            "--attach",
        }
    ),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l", "-x", "-L"}),
    "valgrind": frozenset(),
    "xvfb-run": frozenset(
        {
            "-n",
            "--server-num",
            "-s",
            "--server-args",
            "-e",
            "--error-file",
            "-f",
            "--auth-file",
            "-p",
            "--xauth-protocol",
        }
    ),
    "fakeroot": frozenset({"-l", "--lib", "--faked", "-s", "-i"}),
    "systemd-run": frozenset(
        {
            "-u",
            "--unit",
            "-p",
            "--property",
            "-E",
            "--setenv",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "-t",
            "--working-directory",
        }
    ),
    "nsenter": frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "-r"}),
    "unshare": frozenset(
        {
            "--map-user",
            "--map-group",
            "--propagation",
            "--setgroups",
            "-S",
            "-G",
            "-R",
            "--root",
            "-w",
            "--wd",
        }
    ),
    "chroot": frozenset({"--userspec", "--groups"}),
    "runuser": frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-G",
            "--supp-group",
            "-s",
            "--shell",
            "-w",
            "--whitelist-environment",
        }
    ),
    "setpriv": frozenset(
        {
            "--reuid",
            "--regid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--selinux-label",
            "--apparmor-profile",
        }
    ),
    "catchsegv": frozenset(),
    "caffeinate": frozenset({"-t", "-w"}),
}
# The wrappers whose first operand is a value, not the command: `timeout 5 cmd`.
WRAPPER_VALUE_OPERANDS = {"timeout": 1, "taskset": 1, "chrt": 1, "flock": 1, "chroot": 1}

# Where the programs that write files put what they write (checked against
# startup files, /etc, the workspace and block devices).
WRITERS: dict[str, str] = {
    "tee": "all",
    "cp": "last",
    "mv": "last",
    "install": "last",
    "ln": "last",
    "rsync": "last",
    "scp": "last",
    "touch": "all",
    "truncate": "all",
    "mkdir": "all",
    "shred": "all",
    "wipefs": "all",
    "blkdiscard": "all",
}
# `sed -i`, `perl -i`: in-place edits of every operand after the script.
IN_PLACE_EDITORS = frozenset({"sed", "perl"})

SHELL_PROGRAMS = frozenset(SHELLS.split())
INTERPRETERS = frozenset(
    [
        "python",
        "python2",
        "python3",
        "perl",
        "ruby",
        "node",
        "nodejs",
        "deno",
        "bun",
        "php",
        "lua",
        "tclsh",
        "osascript",
        "Rscript",
        "julia",
        "pwsh",
    ]
)
# Options of interpreters that take a value (so ``python -W ignore x.py`` runs x.py).
INTERPRETER_VALUE_OPTIONS = frozenset(
    [
        "-W",
        "-X",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-C",
        "-I",
        "-E",
        "--conditions",
        "-d",
    ]
)
# Environment variables whose value is a command line the program runs (checked as one).
ENV_COMMANDS = frozenset(
    [
        "PAGER",
        "MANPAGER",
        "GIT_PAGER",
        "EDITOR",
        "VISUAL",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_SSH_COMMAND",
        "GIT_SSH",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_PROXY_COMMAND",
        "BROWSER",
        "PROMPT_COMMAND",
    ]
)
# Environment variables that load code or settings into the program: always ask.
ENV_CODE = frozenset(
    [
        "LD_PRELOAD",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "PERL5OPT",
        "RUBYOPT",
        "PYTHONSTARTUP",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG",
        "GIT_CONFIG_COUNT",
        "GIT_EXEC_PATH",
        "TAR_OPTIONS",
    ]
)
DOWNLOADERS = frozenset(
    ["curl", "wget", "fetch", "aria2c", "http", "https", "lwp-request", "nc", "ncat"]
)


def _subcommand_words(use: Use) -> list[str]:
    """Operands after the global options that take a value (``git -C dir push``)."""
    words, skip = [], False
    for a in use.args:
        if skip:
            skip = False
        elif use.program == "git" and a in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            skip = True
        elif not a.startswith("-"):
            words.append(a)
    return words


def rules_for(program: str) -> list[Rule]:
    return _BY_PROGRAM.get(program, [])


_BY_PROGRAM: dict[str, list[Rule]] = {}
for _rule in RULES:
    for _program in _rule.programs:
        _BY_PROGRAM.setdefault(_program, []).append(_rule)


def describe(rule_id: str) -> str:
    """The reason shown for a rule id (for `hermes approvals list`)."""
    for r in RULES:
        if r.id == rule_id:
            return r.reason
    if rule_id in STRUCTURAL:
        return STRUCTURAL[rule_id][1]
    return rule_id
