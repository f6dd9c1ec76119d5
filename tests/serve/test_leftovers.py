"""Which processes belong to a recorded server (records.leftovers): pure, over process tables written out."""

from __future__ import annotations

from agentcfg.serve.procs import Proc
from agentcfg.serve.records import leftovers, server_alive
from agentcfg.serve.waits import requests_in_flight

ME, OTHER = 1000, 1001
RECORD = {"pid": 100, "pgid": 100, "start": 5000, "engines": [[101, 5100], [102, 5200]]}


def proc(pid: int, ppid: int, pgid: int, start: int, uid: int = ME, name: str = "python") -> Proc:
    return Proc(pid, ppid, pgid, pgid, uid, start, name, (name,))


SERVER = proc(100, 1, 100, 5000, name="vllm")
ENGINE = proc(101, 100, 100, 5100, name="VLLM::EngineCor")
WORKER = proc(102, 101, 100, 5200, name="VLLM::Worker_TP")


def pids(found: list[Proc]) -> list[int]:
    return sorted(p.pid for p in found)


def test_a_running_server_its_group_and_its_descendants() -> None:
    setsid_child = proc(103, 101, 103, 5300)  # left the group (setsid), still under the server
    table = [SERVER, ENGINE, WORKER, setsid_child, proc(200, 1, 200, 5050)]
    assert server_alive(RECORD, table) == SERVER
    assert pids(leftovers(RECORD, table, ME)) == [100, 101, 102, 103]


def test_after_a_kill_9_the_recorded_engines_and_the_group_members_of_its_time() -> None:
    orphan_engine = proc(101, 1, 100, 5100, name="VLLM::EngineCor")  # reparented to init
    tracker = proc(104, 1, 100, 5150)  # not recorded, in its group, started between the server and its engines
    assert pids(leftovers(RECORD, [orphan_engine, WORKER, tracker], ME)) == [101, 102, 104]


def test_a_reused_pid_is_not_the_server_and_its_children_are_not_counted() -> None:
    reused = proc(100, 1, 100, 9000, name="bash")  # pid 100 again, started long after: not the server
    child = proc(300, 100, 300, 9100)
    assert server_alive(RECORD, [reused, child]) is None
    assert leftovers(RECORD, [reused, child], ME) == []


def test_a_later_group_with_the_same_id_is_not_the_servers() -> None:
    later = [proc(100, 1, 100, 9000, name="sh"), proc(105, 100, 100, 9001)]  # all of the old group was gone
    assert leftovers(RECORD, later, ME) == []


def test_a_pid_reused_for_a_recorded_engine_is_not_counted() -> None:
    assert leftovers(RECORD, [proc(101, 1, 101, 9999)], ME) == []


def test_another_users_processes_are_never_counted() -> None:
    assert leftovers(RECORD, [proc(101, 1, 100, 5100, uid=OTHER), SERVER], ME) == [SERVER]


def test_requests_in_flight_from_vllm_metrics() -> None:
    text = (
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        'vllm:num_requests_running{engine="0",model_name="m"} 2.0\n'
        'vllm:num_requests_waiting{engine="0",model_name="m"} 1.0\n'
        'vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="capacity"} 1.0\n'  # vLLM 0.32: a part
    )
    assert requests_in_flight(text) == 3
    assert requests_in_flight("vllm:num_requests_running 0.0\n") == 0
    assert requests_in_flight("# nothing of vLLM's\n") is None
