"""Point slurmdbd at the database credentials in the secret's AWSCURRENT version.

Runs ON A CONTROLLER, as root, started by the rotation function's SSM document::

    python3 - SECRET_ID CONF_PATH OWNER VERIFY_SECONDS

1. fetch the secret itself with the node's instance role (``aws secretsmanager
   get-secret-value --version-stage AWSCURRENT``, as the HyperPod lifecycle scripts do), so
   the password never travels in SSM parameters, command lines, logs or results;
2. rewrite ``StorageUser``/``StoragePass`` in the local slurmdbd.conf atomically (temp file in
   the same directory, mode 600, owned by OWNER, renamed over the old one), every other byte
   of the file untouched; the same for ``slurmdbd.conf.bak``, which HyperPod's ``sed -i.bak``
   leaves behind holding the first password (a symlink of that name is removed, never followed);
3. restart slurmdbd and wait until ``sacctmgr show cluster`` answers (a restart is needed:
   ``sacctmgr reconfigure`` does not reload StoragePass);
4. print one JSON line with the outcome (never a password) and exit 0, or 1 on failure.

If slurmdbd does not answer with the new credentials and the user name changed (alternating
users: the previous user still works), the previous file is put back and slurmdbd restarted.

It runs as root with parameters a caller chose, so it only ever writes a file named
``slurmdbd.conf`` (and its ``.bak``) and only restarts the ``slurmdbd`` unit; files are created
with O_EXCL under a random name (mkstemp) and owned through their descriptor (fchown).

Step 1 has no other source: no variable or argument replaces the call, so nothing in a root
shell's environment can point the script at a secret of its choosing. The lab and the tests give
the node a stand-in ``aws`` on its PATH, as a controller has the real one
(``hyperpod_ha_dev.simulation.node_aws_cli``). The process reads the secret from that command's
stdout pipe only.

Must run on the python3 of the controllers' images: Ubuntu 20.04's Python 3.8 and later.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
import subprocess
import sys
import tempfile
import time

SLURM_BIN = "/opt/slurm/bin"  # where HyperPod installs sacctmgr; not on an SSM session's PATH
SERVICE = "slurmdbd"  # the only unit this script restarts
CONF_NAME = "slurmdbd.conf"  # the only file name it rewrites (plus its sed leftover below)
BACKUP_SUFFIX = ".bak"
_SETTING = re.compile(r"^(\s*)(StorageUser|StoragePass)(\s*=)", re.IGNORECASE)
# What slurmdbd.conf's parser would not read back literally: whitespace, comments, quotes.
_CONF_UNSAFE = re.compile(r"[\s#\"'\\]")
_ARN_REGION = re.compile(r"^arn:[^:]+:secretsmanager:([a-z0-9-]+):")


class NodeFailure(Exception):
    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason
        self.restored_previous = False


def _last_line(text: bytes) -> str:
    lines = [line.strip() for line in text.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _progress(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def fetch_secret(secret_id: str) -> str:
    """AWSCURRENT of ``secret_id``, as the node's instance role reads it (the AWS CLI)."""
    argv = [
        "aws",
        "secretsmanager",
        "get-secret-value",
        "--secret-id",
        secret_id,
        "--version-stage",
        "AWSCURRENT",
        "--query",
        "SecretString",
        "--output",
        "text",
    ]
    region = _ARN_REGION.match(secret_id)
    if region:
        argv += ["--region", region.group(1)]
    try:
        completed = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NodeFailure("fetch", f"cannot run {argv[0]}: {type(error).__name__}") from None
    if completed.returncode != 0:
        raise NodeFailure("fetch", f"{argv[0]} exited {completed.returncode}: {_last_line(completed.stderr)}")
    return completed.stdout.decode("utf-8")


def credentials_from(secret_text: str) -> tuple[str, str]:
    try:
        document = json.loads(secret_text)
    except ValueError:
        raise NodeFailure("fetch", "the secret is not JSON") from None
    if not isinstance(document, dict):
        raise NodeFailure("fetch", "the secret's JSON is not an object")
    username = document.get("username")
    password = document.get("password")
    if not isinstance(username, str) or not username or _CONF_UNSAFE.search(username):
        raise NodeFailure("fetch", "the secret's username is missing or cannot be written to slurmdbd.conf")
    if not isinstance(password, str) or not password or _CONF_UNSAFE.search(password):
        raise NodeFailure("fetch", "the secret's password is missing or cannot be written to slurmdbd.conf")
    return username, password


def _value(line: str, match: re.Match[str]) -> str:
    return line[match.end() :].split("#", 1)[0].strip()


def rewrite_conf(text: str, username: str, password: str) -> tuple[str, str | None, bool]:
    """The file with new StorageUser/StoragePass; (new text, previous user, password changed).

    Only those lines change (all of them, should a key appear twice); a missing key is
    appended. Line endings, comments and every other setting stay as they were.
    """
    out: list[str] = []
    seen: set[str] = set()
    previous_user: str | None = None
    password_changed = False
    for line in text.splitlines(keepends=True):
        match = _SETTING.match(line)
        if match is None:
            out.append(line)
            continue
        key = match.group(2).lower()
        ending = line[len(line.rstrip("\r\n")) :]
        if key == "storageuser":
            previous_user = _value(line, match)
            value = username
        else:
            password_changed = password_changed or _value(line, match) != password
            value = password
        out.append(match.group(1) + match.group(2) + match.group(3) + value + ending)
        seen.add(key)
    if out and not out[-1].endswith("\n"):
        out.append("\n")
    if "storageuser" not in seen:
        out.append(f"StorageUser={username}\n")
    if "storagepass" not in seen:
        out.append(f"StoragePass={password}\n")
        password_changed = True
    return "".join(out), previous_user, password_changed


def conf_file(path: str) -> str:
    """The file to rewrite: ``path`` itself, or the file a symlink there points at, provided
    both are named slurmdbd.conf and it is a regular file (never, say, /etc/shadow)."""
    if os.path.basename(path) != CONF_NAME:
        raise NodeFailure("arguments", f"{path} is not a {CONF_NAME}")
    real = os.path.realpath(path)
    if os.path.basename(real) != CONF_NAME:
        raise NodeFailure("arguments", f"{path} points at a file not named {CONF_NAME}")
    try:
        info = os.lstat(real)
    except OSError as error:
        raise NodeFailure("rewrite", f"cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise NodeFailure("arguments", f"{real} is not a regular file")
    return real


def read_conf(path: str) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with open(descriptor, encoding="utf-8", errors="surrogateescape", newline="") as handle:
            return handle.read()
    except OSError as error:
        raise NodeFailure("rewrite", f"cannot read {path}: {error.strerror}") from None


def replace_file(real: str, text: str, owner: str) -> None:
    """Put a new file at ``real`` in one rename; a symlink there is replaced, never followed."""
    try:
        account = pwd.getpwnam(owner)
    except KeyError:
        raise NodeFailure("rewrite", f"no user {owner!r} on this node") from None
    try:
        # O_CREAT|O_EXCL, mode 600, random name: nothing planted in the directory is followed.
        descriptor, temporary = tempfile.mkstemp(prefix=".slurmdbd.conf.", dir=os.path.dirname(real))
    except OSError as error:
        raise NodeFailure(
            "rewrite", f"cannot create a temporary file beside {real}: {error.strerror}"
        ) from None
    try:
        os.fchmod(descriptor, 0o600)
        os.fchown(descriptor, account.pw_uid, account.pw_gid)
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, real)
    except OSError as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise NodeFailure("rewrite", f"cannot replace {real}: {error.strerror}") from None
    directory = os.open(os.path.dirname(real), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def scrub_backup(conf: str, username: str, password: str, owner: str) -> str:
    """Bring ``<conf>.bak`` (HyperPod's ``sed -i.bak`` leftover) to the new credentials, mode 600.

    Returns what was done: ``absent``, ``rewritten`` or ``removed`` (a symlink or anything
    but a regular file: not a backup this script trusts to read).
    """
    backup = conf + BACKUP_SUFFIX
    try:
        info = os.lstat(backup)
    except FileNotFoundError:
        return "absent"
    except OSError as error:
        raise NodeFailure("rewrite", f"cannot look at {backup}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            raise NodeFailure("rewrite", f"{backup} is a directory")
        try:
            os.unlink(backup)
        except OSError as error:
            raise NodeFailure("rewrite", f"cannot remove {backup}: {error.strerror}") from None
        return "removed"
    text, _, _ = rewrite_conf(read_conf(backup), username, password)
    replace_file(backup, text, owner)
    return "rewritten"


def restart() -> None:
    service = SERVICE
    try:
        completed = subprocess.run(
            ["systemctl", "restart", service],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NodeFailure("restart", f"systemctl restart {service}: {type(error).__name__}") from None
    if completed.returncode != 0:
        raise NodeFailure(
            "restart",
            f"systemctl restart {service} exited {completed.returncode}: {_last_line(completed.stderr)}",
        )


def wait_until_answering(verify_seconds: int) -> float:
    """Seconds until ``sacctmgr show cluster`` succeeded; NodeFailure after ``verify_seconds``."""
    started = time.monotonic()
    last = ""
    while True:
        try:
            completed = subprocess.run(
                ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"],
                capture_output=True,
                timeout=30,
                check=False,
            )
            if completed.returncode == 0:
                return round(time.monotonic() - started, 2)
            last = _last_line(completed.stderr) or _last_line(completed.stdout)
        except (OSError, subprocess.TimeoutExpired) as error:
            last = f"sacctmgr: {type(error).__name__}"
        if time.monotonic() - started >= verify_seconds:
            raise NodeFailure("verify", f"slurmdbd did not answer within {verify_seconds} s: {last}")
        time.sleep(1)


def apply(secret_id: str, conf_path: str, owner: str, verify_seconds: int) -> dict[str, object]:
    conf = conf_file(conf_path)
    username, password = credentials_from(fetch_secret(secret_id))
    original = read_conf(conf)
    updated, previous_user, password_changed = rewrite_conf(original, username, password)
    replace_file(conf, updated, owner)
    backup = scrub_backup(conf, username, password, owner)
    _progress(f"{conf_path} rewritten for user {username} (backup {backup}); restarting {SERVICE}")
    try:
        restart()
        seconds = wait_until_answering(verify_seconds)
    except NodeFailure as failure:
        # Only the alternating strategy's previous user still logs in; a single user's previous
        # password is already gone, so putting it back would only hide the failure. The .bak keeps
        # the new credentials: they are AWSCURRENT, no older secret goes back into a file.
        if previous_user is not None and previous_user != username:
            _progress(
                f"slurmdbd does not answer as {username}; putting back the configuration for {previous_user}"
            )
            failure.restored_previous = _restore(conf, original, owner, verify_seconds)
        raise
    return {
        "outcome": "updated",
        "storage_user": username,
        "previous_user": previous_user,
        "user_changed": previous_user != username,
        "password_changed": password_changed,
        "backup": backup,
        "seconds_to_answer": seconds,
    }


def _restore(conf: str, original: str, owner: str, verify_seconds: int) -> bool:
    """The configuration before the roll-out put back; True when slurmdbd answers again."""
    try:
        replace_file(conf, original, owner)
        restart()
        wait_until_answering(verify_seconds)
    except NodeFailure as failure:
        _progress(f"restoring failed at {failure.stage}: {failure.reason}")
        return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 4 or not argv[3].isdigit():
        usage = "usage: SECRET_ID CONF_PATH OWNER VERIFY_SECONDS"
        print(json.dumps({"outcome": "failed", "stage": "arguments", "reason": usage}))
        return 2
    secret_id, conf_path, owner, verify_seconds = argv[0], argv[1], argv[2], int(argv[3])
    os.environ["PATH"] = os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin") + os.pathsep + SLURM_BIN
    try:
        report = apply(secret_id, conf_path, owner, verify_seconds)
    except NodeFailure as failure:
        report = {
            "outcome": "failed",
            "stage": failure.stage,
            "reason": failure.reason,
            "restored_previous": failure.restored_previous,
        }
        print(json.dumps(report, sort_keys=True))
        return 1
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
