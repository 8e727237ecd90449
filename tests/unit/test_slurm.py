"""Parsers of Slurm's output and of the probe's sections, on every real capture we have."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    SECTIONS,
    ControllerHost,
    PingLine,
    ProbeOutputError,
    ProbeSection,
    SlurmOutputError,
    decode_heartbeat,
    first_error,
    format_probe_output,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_heartbeat,
    parse_identity,
    parse_node_states,
    parse_ping,
    parse_probe_output,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_state_save,
)
from hyperpod_ha_dev import CAPTURES


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def blocks(name: str) -> list[tuple[str, int, str]]:
    """The ``=== <file>:<line> rc=<rc>`` blocks of a multi-output fixture."""
    found: list[tuple[str, int, str]] = []
    for chunk in re.split(r"^=== ", capture(name), flags=re.MULTILINE)[1:]:
        header, _, body = chunk.partition("\n")
        where, _, rc = header.partition(" rc=")
        found.append((where, int(rc), body))
    return found


def poller_outputs(name: str) -> list[tuple[int, str]]:
    """Poller lines: ``t -> t rc=N   line|line|`` -> (rc, output with newlines)."""
    found: list[tuple[int, str]] = []
    for line in capture(name).splitlines():
        match = re.fullmatch(r"\s*[0-9.]+ ->\s+[0-9.]+ rc=(\d+)\s+(.*)", line)
        assert match, line
        found.append((int(match[1]), match[2].replace("|", "\n")))
    return found


# --- scontrol ping ------------------------------------------------------------------------


PING_BLOCKS = blocks("scontrol_ping_outputs.txt")
PING_POLLS = poller_outputs("scontrol_ping_poller_lines.txt")


def test_the_ping_fixtures_hold_every_captured_output() -> None:
    assert len(PING_BLOCKS) == 17
    assert len(PING_POLLS) > 100


@pytest.mark.parametrize(("where", "rc", "text"), PING_BLOCKS, ids=[b[0] for b in PING_BLOCKS])
def test_parse_ping_on_every_captured_scontrol_ping(where: str, rc: int, text: str) -> None:
    lines = parse_ping(text)
    states = re.findall(r"is (UP|DOWN)$", text, flags=re.MULTILINE)
    assert [line.host for line in lines] == ["ctl1", "ctl2"]
    assert [line.label for line in lines] == ["primary", "backup"]
    assert [line.responding for line in lines] == [state == "UP" for state in states]
    # scontrol ping exits 0 when any controller answered
    assert (rc == 0) == any(line.responding for line in lines)


def test_parse_ping_on_every_captured_poller_result() -> None:
    for rc, text in PING_POLLS:
        lines = parse_ping(text)
        assert [line.index for line in lines] == [0, 1]
        assert (rc == 0) == any(line.responding for line in lines), text


def test_a_standby_backup_answers_ping_up() -> None:
    # 03: ctl2 is in standby (its log says so) and still answers UP: the label is a position.
    assert parse_ping(capture("ping_all_up.txt")) == [
        PingLine(host="ctl1", label="primary", responding=True),
        PingLine(host="ctl2", label="backup", responding=True),
    ]


def test_parse_ping_after_failover_skips_the_root_banner() -> None:
    assert parse_ping(capture("ping_primary_down.txt")) == [
        PingLine(host="ctl1", label="primary", responding=False),
        PingLine(host="ctl2", label="backup", responding=True),
    ]


def test_parse_ping_of_real_22_05_with_three_controllers() -> None:
    # scontrol 22.05.8 itself, three SlurmctldHost lines, none reachable (README of the fixtures)
    lines = parse_ping(capture("ping_three_down_real_22_05.txt"))
    assert [(line.host, line.label, line.index, line.responding) for line in lines] == [
        ("ctlA", "primary", 0, False),
        ("ctlB", "backup1", 1, False),
        ("ctlC", "backup2", 2, False),
    ]


def test_parse_ping_with_three_controllers_uses_numbered_backups() -> None:
    # scontrol's format with three SlurmctldHost lines: "backup%d" with the 0-based position.
    text = (
        "Slurmctld(primary) at ip-10-1-0-11 is DOWN\n"
        "Slurmctld(backup1) at ip-10-1-0-12 is UP\n"
        "Slurmctld(backup2) at ip-10-1-0-13 is UP\n"
        "*****************************************\n"
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
        "*****************************************\n"
    )
    lines = parse_ping(text)
    assert [(line.label, line.index, line.responding) for line in lines] == [
        ("primary", 0, False),
        ("backup1", 1, True),
        ("backup2", 2, True),
    ]


def test_parse_ping_reads_session_manager_line_endings() -> None:
    text = capture("ping_primary_down.txt").replace("\n", "\r\n")
    assert [line.responding for line in parse_ping(text)] == [False, True]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n",
        "scontrol: unrecognized option '--json'\nTry \"scontrol --help\" for more information\n",
        capture("sinfo_connect_failure.txt"),
        "Slurmctld(primary) at ctl1 is UP\nscontrol: error: something else\n",
        "Slurmctld(primary) at ctl1 is MAYBE\n",
        "Slurmctld(backup) at ctl1 is UP\n",  # a backup in the primary's place
        "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup1) at ctl2 is UP\n",  # two: "backup"
        "Slurmctld(primary) at a is UP\nSlurmctld(backup) at b is UP\nSlurmctld(backup) at c is UP\n",
    ],
)
def test_parse_ping_rejects_what_is_not_ping_output(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_ping(text)


def test_ping_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="not scontrol ping output"):
        parse_ping("bash: scontrol: command not found")


@given(st.text())
def test_parse_ping_on_any_text_returns_lines_or_raises_its_error(text: str) -> None:
    try:
        lines = parse_ping(text)
    except SlurmOutputError:
        return
    assert lines
    assert all(isinstance(line, PingLine) for line in lines)


ping_texts = st.lists(
    st.tuples(st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True), st.booleans()), min_size=1, max_size=6
)


@given(ping_texts, st.booleans(), st.booleans())
def test_parse_ping_reads_back_what_scontrol_would_print(
    controllers: list[tuple[str, bool]], banner: bool, crlf: bool
) -> None:
    out = []
    for position, (host, up) in enumerate(controllers):
        label = "primary" if position == 0 else ("backup" if len(controllers) == 2 else f"backup{position}")
        out.append(f"Slurmctld({label}) at {host} is {'UP' if up else 'DOWN'}")
    if banner:
        out += ["*" * 41, "** RESTORE SLURMCTLD DAEMON TO SERVICE **", "*" * 41]
    text = ("\r\n" if crlf else "\n").join(out) + "\n"
    lines = parse_ping(text)
    assert [(line.host, line.responding) for line in lines] == controllers
    assert [line.index for line in lines] == list(range(len(controllers)))


# --- configuration ------------------------------------------------------------------------


def test_parse_show_config_of_the_lab() -> None:
    config = parse_show_config(capture("show_config_lab.txt") + capture("show_config_accounting_lab.txt"))
    assert config.source == "scontrol"
    assert config.controllers == (
        ControllerHost(index=0, name="ctl1", address="10.214.0.11"),
        ControllerHost(index=1, name="ctl2", address="10.214.0.12"),
    )
    assert config.slurmctld_timeout == 10
    assert config.state_save_location == "/srv/hplab/shared/state"
    assert config.cluster_name == "lab"
    assert config.log_file is None


def test_parse_show_config_with_three_hosts_names_and_nulls() -> None:
    text = (
        "Configuration data as of 2026-11-29T23:30:00\n"
        "SlurmctldHost[0]        = ip-10-1-0-11\n"
        "SlurmctldHost[2]        = ip-10-1-0-13(10.1.0.13)\n"
        "SlurmctldHost[1]        = ip-10-1-0-12(10.1.0.12)\n"
        "SlurmctldLogFile        = (null)\n"
        "SlurmctldTimeout        = 300 sec\n"
        "SlurmUser               = slurm(401)\n"
        "SLURM_VERSION           = 24.05.4\n"
        "Slurmctld(primary) at ip-10-1-0-11 is UP\n"
    )
    config = parse_show_config(text)
    assert [(h.index, h.name, h.address) for h in config.controllers] == [
        (0, "ip-10-1-0-11", None),
        (1, "ip-10-1-0-12", "10.1.0.12"),
        (2, "ip-10-1-0-13", "10.1.0.13"),
    ]
    assert config.slurmctld_timeout == 300
    assert config.slurm_user == "slurm"
    assert config.version == "24.05.4"
    assert config.log_file is None


def test_parse_show_config_of_old_slurm_reads_control_machine() -> None:
    text = (
        "ControlMachine = head1\nControlAddr = 10.0.0.1\nBackupController = head2\nSlurmctldTimeout = 120\n"
    )
    config = parse_show_config(text)
    assert [(h.name, h.address) for h in config.controllers] == [("head1", "10.0.0.1"), ("head2", None)]


@pytest.mark.parametrize(
    "text",
    ["", capture("sinfo_connect_failure.txt"), "SlurmctldTimeout = soon\n", "SlurmctldHost[0] = a b\n"],
)
def test_parse_show_config_rejects(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_show_config(text)


def test_parse_slurm_conf_section() -> None:
    text = (
        "path=/opt/slurm/etc/slurm.conf\n"
        "SlurmctldHost=ip-10-1-0-11(10.1.0.11)\n"
        "SlurmctldHost=ip-10-1-0-12\n"
        "slurmctldtimeout=120 # seconds\n"
        "StateSaveLocation=/fsx/aws/hyperpod/c1/var/spool/slurmctld\n"
        "SlurmctldLogFile=/var/log/slurm/slurmctld.log\n"
    )
    config = parse_slurm_conf(text)
    assert config.source == "slurm.conf"
    assert [(h.index, h.name, h.address) for h in config.controllers] == [
        (0, "ip-10-1-0-11", "10.1.0.11"),
        (1, "ip-10-1-0-12", None),
    ]
    assert config.slurmctld_timeout == 120
    assert config.state_save_location == "/fsx/aws/hyperpod/c1/var/spool/slurmctld"
    assert config.log_file == "/var/log/slurm/slurmctld.log"


@pytest.mark.parametrize("text", ["", "path=\n", "SlurmctldHost=a\n", "path=/x\nnot a line\n"])
def test_parse_slurm_conf_rejects(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_slurm_conf(text)


# --- slurmdbd ------------------------------------------------------------------------------


def test_parse_cluster_registrations_of_every_capture() -> None:
    ((_, rc, text),) = blocks("sacctmgr_show_cluster_outputs.txt")
    assert rc == 0
    (row,) = parse_cluster_registrations(text)
    assert (row.cluster, row.control_host, row.control_port) == ("lab", "10.214.0.11", 6817)
    (after,) = parse_cluster_registrations(capture("sacctmgr_cluster_ctl2.txt"))
    assert after.control_host == "10.214.0.12"


def test_no_registered_controller_reads_as_none() -> None:
    (row,) = parse_cluster_registrations(capture("sacctmgr_cluster_none.txt"))
    assert (row.control_host, row.control_port) == (None, None)


@pytest.mark.parametrize(
    "name", ["sacctmgr_cluster_refused.txt", "sacctmgr_cluster_db_access_denied.txt", "ping_all_up.txt"]
)
def test_parse_cluster_registrations_rejects_errors(name: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_cluster_registrations(capture(name))


def test_first_error_names_the_cause() -> None:
    assert (first_error(capture("sacctmgr_cluster_refused.txt")) or "").endswith("Connection refused")
    assert "Unable to connect to database" in (
        first_error(capture("sacctmgr_cluster_db_access_denied.txt")) or ""
    )
    assert first_error("") is None


@pytest.mark.parametrize(("where", "rc", "text"), blocks("sacctmgr_ping_outputs.txt"))
def test_sacctmgr_ping_does_not_exist_in_22_05(where: str, rc: int, text: str) -> None:
    assert rc == 1
    assert parse_dbd_ping(text).supported is False


def test_sacctmgr_ping_of_newer_slurm() -> None:
    ping = parse_dbd_ping(
        "slurmdbd(primary) at ip-10-1-0-11 is UP\nslurmdbd(backup) at ip-10-1-0-12 is DOWN\n"
    )
    assert ping.supported
    assert ping.responding == (("ip-10-1-0-11", True), ("ip-10-1-0-12", False))
    with pytest.raises(SlurmOutputError):
        parse_dbd_ping("sacctmgr: error: Failed to perform slurmdbd pings\n")


# --- sinfo, sdiag --------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "rc", "text"), blocks("sinfo_outputs.txt"))
def test_parse_node_states_on_every_captured_sinfo(where: str, rc: int, text: str) -> None:
    if rc == 0:
        states = parse_node_states(text)
        assert sum(state.count for state in states) == 2
    else:
        with pytest.raises(SlurmOutputError):
            parse_node_states(text)


def test_parse_node_states_on_every_captured_poller_result() -> None:
    results = poller_outputs("sinfo_poller_lines.txt")
    assert any(rc == 1 for rc, _ in results)
    for rc, text in results:
        if rc == 0:
            assert sum(state.count for state in parse_node_states(text)) == 2
        else:
            with pytest.raises(SlurmOutputError):
                parse_node_states(text)


def test_nodes_the_isolated_primary_marked_down_do_not_respond() -> None:
    states = parse_node_states(capture("sinfo_down_not_responding.txt"))
    assert [(s.state, s.count, s.responding) for s in states] == [("down*", 1, False), ("idle", 1, True)]


def test_parse_agent_queue_size() -> None:
    assert parse_agent_queue_size(capture("sdiag_dbd_queue_empty.txt")) == 0
    assert parse_agent_queue_size(capture("sdiag_dbd_queue_growing.txt")) == 3
    assert parse_agent_queue_size("Server thread count: 3\n") is None


# --- slurmctld's log ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "last", "events"),
    [
        ("slurmctld_log_ctl1_primary.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_standby.txt", "standby", ["starting", "standby"]),
        ("slurmctld_log_ctl2_takeover.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl2_takeover_04b.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_restart.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_control_back.txt", "standby", ["stopping", "standby"]),
        ("slurmctld_log_ctl1_takeover_shutdown.txt", "stopping", ["stopping"]),
        ("slurmctld_log_ctl2_takeover_requested.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_partitioned.txt", None, []),
        ("slurmctld_log_ctl2_partitioned.txt", None, []),
    ],
)
def test_role_lines_of_every_captured_log(name: str, last: str | None, events: list[str]) -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:40:00\nsource=file:/var/log/slurmctld.log\n" + capture(name)
    )
    assert [line.event for line in log.lines] == events
    assert (log.last.event if log.last else None) == last
    assert log.source == "file:/var/log/slurmctld.log"


def test_role_line_age_and_journal_lines() -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:30:00\nsource=journal:slurmctld\n"
        "2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: Running as primary controller\n"
    )
    assert log.last is not None
    assert log.last.event == "primary"
    assert log.age_seconds(log.last) == 7


# --- heartbeat, state directory, identity, services ---------------------------------------


def test_decode_the_captured_heartbeats() -> None:
    # 02: xxd shows 0000 0000 6b0c b57c / 0000 0000 0000 0000, the lab decoded time=1795995004 writer_index=0
    assert "time=1795995004" in capture("heartbeat_02_xxd.txt")
    assert decode_heartbeat((CAPTURES / "heartbeat_writer0.bin").read_bytes()) == (1795995004, 0)
    assert "controller_index=1" in capture("heartbeat_04b_hex.txt")
    assert decode_heartbeat((CAPTURES / "heartbeat_writer1.bin").read_bytes()) == (1795993445, 1)


@pytest.mark.parametrize("data", [b"", b"\x00" * 8, b"\x00" * 17, b"\x00" * 8 + b"\xff" * 8])
def test_decode_heartbeat_rejects_other_files(data: bytes) -> None:
    with pytest.raises(SlurmOutputError):
        decode_heartbeat(data)


def test_parse_heartbeat_section() -> None:
    beat = parse_heartbeat(
        "path=/srv/state/heartbeat\nexists=yes\nsize=16\nmtime=1795995005\nnow=1795995007\n"
        "bytes= 0 0 0 0 107 12 181 124 0 0 0 0 0 0 0 1\n"
    )
    assert (beat.beat_time, beat.writer_index, beat.age_seconds, beat.error) == (1795995004, 1, 3, None)
    short = parse_heartbeat("path=/x/heartbeat\nexists=yes\nsize=4\nnow=5\nbytes=0 0 0 1\n")
    assert short.writer_index is None
    assert short.error == "heartbeat is 4 bytes, expected 16"
    missing = parse_heartbeat("path=/x/heartbeat\nexists=no\nnow=5\n")
    assert missing.exists is False
    with pytest.raises(SlurmOutputError):
        parse_heartbeat("bytes=1 2 300\n")


def test_parse_state_save_section() -> None:
    state = parse_state_save(
        "path=/fsx/state\nexists=yes\nowner=slurm\nmode=755\nmount_target=/fsx\nfstype=lustre\n"
        "source=10.1.0.5@tcp:/abcd\nwritable=yes\nslurm_user=slurm\nwritable_by_slurm_user=no\n"
    )
    assert (state.mount_target, state.fstype, state.writable, state.writable_by_slurm_user) == (
        "/fsx",
        "lustre",
        True,
        False,
    )


def test_parse_identity_and_services() -> None:
    identity = parse_identity(
        "hostname=ctl1\nfqdn=ctl1.lab\naddress=127.0.0.1\naddress=10.214.0.11\nnow=17\nuid=0\n"
    )
    assert (identity.hostname, identity.addresses, identity.now) == ("ctl1", ("127.0.0.1", "10.214.0.11"), 17)
    services = parse_services(
        "systemctl slurmctld unavailable\n"
        "process slurmctld pid=7841 state=S ppid=1 threads=17 same_ns=yes\n"
        "process slurmctld pid=7842 state=S ppid=7841 threads=1 same_ns=no\n"
        "systemctl slurmdbd inactive\n"
    )
    assert services.systemctl == {"slurmctld": "unavailable", "slurmdbd": "inactive"}
    assert [(p.pid, p.ppid, p.state, p.threads, p.same_namespace) for p in services.processes] == [
        (7841, 1, "S", 17, True),
        (7842, 7841, "S", 1, False),
    ]
    # A line that is not the section's (a process gone while read) is skipped, not fatal.
    noisy = parse_services("bash: /proc/3001/status: No such file or directory\nprocess slurmctld state=S\n")
    assert noisy.processes == ()


# --- the probe's output ---------------------------------------------------------------------


def _section(name: str, text: str, rc: int = 0) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=10, timed_out=False, truncated=False)


def test_probe_output_round_trip_with_captured_sections() -> None:
    sections = [
        _section("ping", capture("ping_primary_down.txt").rstrip("\n")),
        _section("sinfo", capture("sinfo_connect_failure.txt").rstrip("\n"), rc=1),
        ProbeSection(name="config", text="", exit_code=124, millis=15003, timed_out=True, truncated=False),
    ]
    output = parse_probe_output(format_probe_output(sections))
    assert output.complete
    assert list(output.sections.values()) == sections
    assert output.sections["config"].ran_out_of_time


def test_probe_output_with_crlf_and_noise_around_it() -> None:
    text = (
        "Starting session\r\n"
        + format_probe_output([_section("ping", "x")]).replace("\n", "\r\n")
        + "bye\r\n"
    )
    output = parse_probe_output(text)
    assert output.complete
    assert output.sections["ping"].text == "x"


def test_probe_output_cut_off_is_incomplete() -> None:
    text = format_probe_output([_section("ping", "a"), _section("sinfo", "b")], complete=False)
    output = parse_probe_output(text)
    assert not output.complete
    cut = text[: text.index("end sinfo")]
    assert set(parse_probe_output(cut).sections) == {"ping"}


def test_a_result_line_of_another_run_does_not_complete_the_output() -> None:
    text = format_probe_output([_section("ping", "a")], nonce="aaaa1111")
    other = text.replace('"nonce":"aaaa1111"', '"nonce":"bbbb2222"')
    assert not parse_probe_output(other).complete


def test_markers_printed_by_a_command_do_not_end_a_section() -> None:
    # Without this run's nonce, a line that looks like a marker is section text.
    inner = "@@hyperpod-ha 0000 end ping rc=0 ms=1 timed_out=0 truncated=0\nHYPERPOD_HA_PROBE_RESULT {}"
    output = parse_probe_output(format_probe_output([_section("role", inner)], nonce="feedc0de"))
    assert output.sections["role"].text == inner
    assert output.complete


@pytest.mark.parametrize(
    "text",
    ["", "bash: base64: command not found\n", "@@hyperpod-ha probe begin version=1\n"],
)
def test_not_probe_output(text: str) -> None:
    with pytest.raises(ProbeOutputError):
        parse_probe_output(text)


def test_malformed_end_marker() -> None:
    text = (
        "@@hyperpod-ha probe begin version=1 nonce=abcd\n"
        "@@hyperpod-ha abcd begin ping\n"
        "@@hyperpod-ha abcd end ping rc=x\n"
    )
    with pytest.raises(ProbeOutputError):
        parse_probe_output(text)


section_text = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=40).map(
        str.strip
    ),
    max_size=6,
).map("\n".join)


@given(
    st.lists(
        st.builds(
            ProbeSection,
            name=st.sampled_from(SECTIONS),
            text=section_text,
            exit_code=st.integers(0, 255),
            millis=st.integers(0, 10**6),
            timed_out=st.booleans(),
            truncated=st.booleans(),
        ),
        unique_by=lambda s: s.name,
        max_size=len(SECTIONS),
    )
)
def test_probe_output_round_trip(sections: list[ProbeSection]) -> None:
    output = parse_probe_output(format_probe_output(sections))
    assert output.complete
    assert list(output.sections.values()) == sections


# Arbitrary text, and text made of pieces the parsers look for.
fragments = st.sampled_from(
    [
        "Slurmctld(primary) at ctl1 is UP",
        "Slurmctld(backup) at ctl2 is DOWN",
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **",
        "SlurmctldHost[0] = ctl1(10.0.0.1)",
        "SlurmctldTimeout = 10 sec",
        "path=/x",
        "bytes=0 0 0 1",
        "exists=yes",
        "process slurmctld pid=1 state=S",
        "systemctl slurmctld active",
        "lab|10.0.0.1|6817",
        "idle 2",
        "@@hyperpod-ha probe begin version=1 nonce=abcd",
        "@@hyperpod-ha abcd begin ping",
        "@@hyperpod-ha abcd end ping rc=0 ms=1 timed_out=0 truncated=0",
        'HYPERPOD_HA_PROBE_RESULT {"nonce":"abcd","complete":true}',
        "[2026-11-29T23:29:53.870] Running as primary controller",
        "=",
        "",
    ]
)
outside_text = st.one_of(
    st.text(), st.lists(st.one_of(fragments, st.text(max_size=20)), max_size=12).map("\n".join)
)

PARSERS = [
    parse_ping,
    parse_show_config,
    parse_slurm_conf,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_node_states,
    parse_agent_queue_size,
    parse_identity,
    parse_services,
    parse_role_log,
    parse_heartbeat,
    parse_state_save,
    parse_probe_output,
]


@pytest.mark.parametrize("parser", PARSERS, ids=[p.__name__ for p in PARSERS])
@settings(max_examples=150)
@given(text=outside_text)
def test_every_parser_returns_a_result_or_its_typed_error(parser: object, text: str) -> None:
    assert callable(parser)
    with contextlib.suppress(SlurmOutputError):
        parser(text)
