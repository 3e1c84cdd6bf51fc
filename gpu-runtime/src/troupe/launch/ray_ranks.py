"""`cluster.kind: "ray"`: Ray places the run's ranks, torch distributed does the collectives (as OpenRLHF,
verl and the Actors library do). Ray is an optional extra (`pip install troupe[cluster]`), imported only here.

One placement group with a bundle per rank ({CPU: 1} or {CPU: 1, GPU: 1}, the spec's strategy); one Ray
actor per bundle runs that rank. Rank 0 picks the rendezvous address on its own node. Its events come back
through a Ray queue (the supervisor may be on another node than rank 0), and control commands go to it the
same way. The rendezvous address is rank 0's node address as Ray knows it, and gloo binds to the interface
holding each rank's node address (two hosts for real: tests/test_ray_two_hosts.py). Checkpoints are written
where rank 0 runs: on several nodes the work folder must be shared storage (the same path on every node).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from ..control import RunControl
from ..events import TERMINAL_STATES, EventWriter, stderr_echo
from ..run import RunResult, StopRequest, exit_code_of, run_spec
from ..spec.runspec_types import ClusterRay, RunSpec
from .distributed import rank_context_from_env, run_ranks
from .node_address import interface_of
from .relay import control_commands, forward_event

_POLL = 0.05


class QueueStream:
    """A text stream whose lines go into a Ray queue (rank 0's event writer writes into it)."""

    def __init__(self, queue: Any):
        self.queue, self.pending = queue, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line:
                self.queue.put(line)
        return len(text)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class RankWorker:
    """One rank, in a Ray actor process. `run` blocks for the whole run; `stop` (a concurrent call) cancels."""

    def __init__(self) -> None:
        self.stop_request = StopRequest()

    def rendezvous(self, ip: str) -> tuple[str, int]:
        """This node's address (Ray's, which the other nodes reach) and a free port on it, for rank 0. Not the
        host name's address: that is often 127.0.0.1, where a rank on another host would wait forever."""
        with socket.socket() as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        return ip, port

    def stop(self, reason: str) -> None:
        self.stop_request.set(reason)

    def run(self, rank: int, world: int, address: tuple[str, int], node_ip: str, spec: dict[str, Any], work_dir: str, seq_start: int, resume: str | None, event_queue: Any, control_queue: Any) -> dict[str, Any]:
        os.environ.update(
            {
                "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": "0", "MASTER_ADDR": address[0], "MASTER_PORT": str(address[1]),
                "TROUPE_RANK_CHILD": "1", "OMP_NUM_THREADS": "1",
            }
        )
        # gloo binds to the interface of this node's Ray address (see node_address.py), unless the node says otherwise.
        interface = interface_of(node_ip)
        if interface is not None and "GLOO_SOCKET_IFNAME" not in os.environ:
            os.environ["GLOO_SOCKET_IFNAME"] = interface
        try:
            ctx = rank_context_from_env()
            events = EventWriter(QueueStream(event_queue) if ctx.is_main else None, seq_start=seq_start, echo=stderr_echo if ctx.is_main else None)
            control = None
            if ctx.is_main:
                control = RunControl()

                def follow() -> None:
                    while True:
                        control.handle_line(control_queue.get(block=True))

                threading.Thread(target=follow, daemon=True).start()
            result = run_spec(spec, events=events, work_dir=work_dir, stop=self.stop_request, control=control, resume=resume, ctx=ctx)
            trace = "".join(traceback.format_exception(result.error)) if result.error is not None else ""
            return {"rank": rank, "state": result.state, "message": result.message, "traceback": trace, "time": time.time()}
        except BaseException as e:  # noqa: BLE001 - reported to the supervisor as this rank's failure
            return {"rank": rank, "state": "failed", "message": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(), "time": time.time()}


def launch_ray_ranks(spec: dict[str, Any], run: RunSpec, cluster: ClusterRay, events: EventWriter, work_dir: Path, stop: Any, control: Any, resume: Any) -> Any:
    """`spec`, the run's document, goes to every rank; what placing them reads comes typed (`run`, its `cluster`)."""
    import ray
    from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group
    from ray.util.queue import Queue
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    world = run_ranks(spec)
    gpus = 1 if any(a.placement.gpus for a in run.actors) else 0
    started_ray = not ray.is_initialized()
    if started_ray:
        if cluster.address:
            ray.init(address=cluster.address, log_to_driver=True)
        else:
            ray.init(num_cpus=world, num_gpus=gpus * world or None, include_dashboard=False, log_to_driver=True)
    events.log("info", f"launching {world} ranks with Ray (placement group, strategy {cluster.strategy}{', 1 GPU per rank' if gpus else ''}); rank 0 reports")
    group = placement_group([{"CPU": 1, **({"GPU": 1} if gpus else {})} for _ in range(world)], strategy=cluster.strategy)
    workers: list[Any] = []
    try:
        ready, _ = ray.wait([group.ready()], timeout=float(os.environ.get("TROUPE_RAY_PLACEMENT_TIMEOUT", "300")))
        if not ready:
            raise RuntimeError(f"Ray could not place {world} ranks ({'GPU' if gpus else 'CPU'} bundles, strategy {cluster.strategy}) within the timeout: the cluster has {ray.cluster_resources()}")
        event_queue, control_queue = Queue(), Queue()
        remote = ray.remote(max_concurrency=2)(RankWorker)
        workers = [
            remote.options(num_cpus=1, num_gpus=gpus, scheduling_strategy=PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=i)).remote()
            for i in range(world)
        ]
        node_addresses = {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes()}
        nodes = _bundle_nodes(node_addresses, placement_group_table(group)["bundles_to_node_id"], world)
        events.log("info", "ranks placed: " + ", ".join(f"rank {i} on node {ip}" for i, ip in enumerate(nodes)))
        address = ray.get(workers[0].rendezvous.remote(nodes[0]))
        seq_start = events.next_seq
        absolute = str(Path(work_dir).resolve())
        resume_arg = str(resume) if resume is not None else None
        pending = [w.run.remote(i, world, address, nodes[i], spec, absolute, seq_start, resume_arg, event_queue, control_queue) for i, w in enumerate(workers)]
        held: list[dict[str, Any]] = []
        last_step, signalled, sent = 0, False, {"paused": False, "stopping": False}
        results: dict[int, dict[str, Any]] = {}
        while len(results) < world:
            done, _ = ray.wait(pending, num_returns=len(pending), timeout=_POLL)
            for ref in done:
                try:
                    outcome = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a dead worker process
                    outcome = {"rank": pending.index(ref), "state": "failed", "message": f"the rank's Ray worker died: {e}", "traceback": str(e), "time": time.time()}
                results[outcome["rank"]] = outcome
            pending = [r for r in pending if r not in done] if done else pending
            last_step = _drain(event_queue, events, held, last_step)
            if control is not None:
                for line in control_commands(control, sent):
                    control_queue.put(line)
            if stop is not None and stop.is_set() and not signalled:
                signalled = True
                for w in workers:
                    w.stop.remote(getattr(stop, "reason", None) or "a stop request")
        time.sleep(_POLL)
        last_step = _drain(event_queue, events, held, last_step)
    finally:
        for w in workers:
            ray.kill(w)
        remove_placement_group(group)
        if started_ray:
            ray.shutdown()
    failures = [r for r in results.values() if r["state"] == "failed"]
    terminal = held[-1] if held else None
    if failures:
        first = min(failures, key=lambda f: f["time"])
        if first["rank"] != 0 or terminal is None:
            message = f"rank {first['rank']} of {world} failed: {first['message']}"
            events.error(message, traceback=first["traceback"])
            events.status("failed", message)
            return RunResult("failed", 1, message, last_step, None, events.events)
    assert terminal is not None
    forward_event(events, terminal)
    events.terminal_written = True
    return RunResult(terminal["state"], exit_code_of(terminal["state"]), terminal.get("message", ""), last_step, None, events.events)


def _bundle_nodes(node_addresses: dict[str, str], bundle_node_ids: dict[int, str], world: int) -> list[str]:
    """Each bundle's node address (`--node-ip-address`), in bundle (= rank) order."""
    return [node_addresses[bundle_node_ids[i]] for i in range(world)]


def _drain(queue: Any, events: EventWriter, held: list[dict[str, Any]], last_step: int) -> int:
    while not queue.empty():
        event = json.loads(queue.get())
        if event["type"] == "status" and event["state"] in TERMINAL_STATES:
            held.append(event)
            continue
        if event["type"] == "metric":
            last_step = max(last_step, int(event["step"]))
        forward_event(events, event)
    return last_step
