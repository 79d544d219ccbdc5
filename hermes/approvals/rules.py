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
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from hermes.approvals.paths import PathJudge, Place

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
    rule("delete-root", "rm", FORBIDDEN, all_of(RECURSIVE, target("catastrophic")),
         "deletes the whole file system, a system folder or your home folder"),
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
    rule("chmod-root", "chmod chown chgrp", FORBIDDEN, all_of(RECURSIVE, target("catastrophic")),
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
         any_of(sub("install", "uninstall", "add", "remove", "upgrade", "reinstall", "sync"),
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
}
# The wrappers whose first operand is a value, not the command: `timeout 5 cmd`.
WRAPPER_VALUE_OPERANDS = {"timeout": 1, "taskset": 1, "chrt": 1, "flock": 1}

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
