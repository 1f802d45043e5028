"""Where a batch's songs are rendered: here, one after another (`--engine local`), or as tasks on Ray actors
(`--engine ray`). The Ray options are checked before any work (check_engine_options), the cluster is joined and
its resources checked once every row has passed its checks (join_ray), and a job leaves this machine with every
path made absolute (sent): a worker's folder is not this one's."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from musicvid.batch.playlist import Job
from musicvid.batch.report import Result
from musicvid.core.errors import UserError, out_of_memory, out_of_room
from musicvid.core.workdir import Workdir
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import AUTO_UPSCALER, LANCZOS, TINY
from vipe_core.errors import Terminated, handled

RAY_OPTIONS = {"address": "--address", "workers": "--workers", "gpus_per_song": "--gpus-per-song"}


def check_engine_options(args) -> None:
    """Refuse, before any work, a Ray option without `--engine ray` (it would be ignored), an --address that names
    nothing (an empty one would start Ray here, as leaving it out does), fewer than one worker, or a number of GPUs
    per song that is not a finite number of 0 or more."""
    if args.engine != "ray":
        given = next((flag for name, flag in RAY_OPTIONS.items() if getattr(args, name) is not None), None)
        if given:
            raise UserError(f"{given} is a Ray option: give it with --engine ray, or leave it out")
        return
    if args.address is not None and not args.address.strip():
        raise UserError("--address is empty: name the Ray cluster to join (e.g. auto), or leave it out")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: a Ray batch needs at least one worker")
    gpus = args.gpus_per_song
    if gpus is not None and not (math.isfinite(gpus) and gpus >= 0):
        raise UserError(f"--gpus-per-song {gpus:g}: give a number of GPUs of 0 or more (a fraction shares one)")


def render_one(job: Job, registry) -> Result:
    from musicvid.pipeline import make_video

    started = time.perf_counter()
    result = Result(song=job.song, status="done", output=str(job.output))
    try:
        # rows of one song share its work directory (without --workdir): one waits for another's render
        made = make_video(job.request, job.settings, registry, output=job.output, wait=True)
        result.duration, result.workdir = made.duration, os.path.abspath(made.workdir.root)
    except KeyboardInterrupt:
        raise
    except Exception as error:  # any one song's failure is reported; the batch goes on
        # (for want of memory or of room on the disk, in the sentence the command line says it in)
        said = out_of_memory(error) or out_of_room(error) or error
        result.status, result.error = "failed", str(said) or type(error).__name__
    result.seconds = round(time.perf_counter() - started, 3)  # to the millisecond, as the table says a quick one
    return result


def render_locally(registry, jobs: list[Job], finished) -> None:
    for job in jobs:
        finished(job, render_one(job, registry))


class SongRenderer:
    """A Ray actor: loads the models once, then renders the songs it is handed. Models it refuses (a device it has
    not) are its `refusal`, said before any song as the local engine says them (Ray would fail every song with its
    own stack)."""

    def __init__(self, choice: ModelChoice):
        from musicvid.models.registry import registry_of

        try:
            self.registry, self.refused = registry_of(choice, keep_loaded=True), None
        except UserError as error:
            self.registry, self.refused = None, str(error)

    def refusal(self) -> str | None:
        return self.refused

    def render(self, job: Job) -> Result:
        return render_one(job, self.registry)


@dataclass(frozen=True)
class RayPlan:
    """How many actors a Ray batch starts, and the GPUs each asks for."""

    workers: int
    gpus: float


def join_ray(args, choice: ModelChoice) -> RayPlan:
    """Ray, started here or joined at --address, and the plan its resources allow; refused in one sentence where the
    cluster cannot be reached, or cannot place the workers asked for (Ray would wait for them forever)."""
    import ray

    from musicvid.storyboard.kernels import compile_librosa

    compile_librosa()  # once, before the workers start
    if not ray.is_initialized():
        check_answers(args.address)
        with handlers_kept():
            try:
                # ("local": without --address, Ray starts here, whatever a RAY_ADDRESS or an earlier `ray start` says;
                # its log lines at ERROR only, so that a refusal below is the one line said)
                ray.init(
                    address=args.address or "local",
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
            except (ConnectionError, ValueError, RuntimeError) as error:
                reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
                raise UserError(f"--address {args.address}: Ray cannot be joined there ({reason})") from None
    nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]  # what each node offers
    gpus_of = [node.get("GPU", 0.0) for node in nodes]
    gpus = args.gpus_per_song if args.gpus_per_song is not None else (1.0 if sum(gpus_of) else 0.0)
    if gpus > max(gpus_of, default=0.0):  # a worker runs on one node
        raise UserError(
            f"--gpus-per-song {gpus:g}: no node of the Ray cluster has that many GPUs (its nodes have "
            f"{', '.join(f'{n:g}' for n in gpus_of) or 'none'})"
        )
    check_device_on_ray(choice.device, sum(gpus_of), gpus)
    # each worker holds a CPU (and its GPUs) for the whole batch: one that cannot be placed would be handed a song
    placed = sum(min(int(n.get("CPU", 0.0)), int(n.get("GPU", 0.0) // gpus) if gpus else math.inf) for n in nodes)
    if (args.workers or 1) > placed:
        each = f"a CPU and {gpus:g} GPU(s)" if gpus else "a CPU"
        raise UserError(f"--workers {args.workers or 1}: the Ray cluster can run {placed} at once (each takes {each})")
    return RayPlan(args.workers or (placed if gpus else 1), gpus)


# How long --address may take to answer: Ray's own wait is a minute and more, its retries printed all along
ANSWER_SECONDS = 10.0


def check_answers(address: str | None) -> None:
    """Refuse an --address HOST:PORT where nothing answers (a TCP connection refused or not made in ANSWER_SECONDS);
    `auto` and a name without a port are Ray's to look up."""
    host, _, port = (address or "").removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=ANSWER_SECONDS).close()
    except (OSError, OverflowError) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        said = f"--address {address}: Ray cannot be joined there (nothing answers at {host}:{port}: {reason})"
        raise UserError(said) from None


@contextlib.contextmanager
def handlers_kept():
    """Within it, what Ray sets for SIGINT, SIGTERM and SIGHUP as it starts is put back to this command's handlers:
    a batch stopped is said and reported as the local one is (Ray's own ended it with its stack, exit 134)."""
    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    kept = {n: signal.getsignal(n) for n in numbers} if threading.current_thread() is threading.main_thread() else {}
    try:
        yield
    finally:
        for number, handler in kept.items():
            if handler is not None:
                signal.signal(number, handler)


def absolute(record):
    """A request's or settings' paths made absolute against this machine's folder."""
    paths = {
        f.name: value.absolute()
        for f in dataclasses.fields(record)
        if isinstance(value := getattr(record, f.name), Path)
    }
    return dataclasses.replace(record, **paths)


def sent(job: Job) -> Job:
    """The job as a Ray worker gets it: every path absolute, as this machine checked it (a worker resolves a relative
    one against its own folder), its work directory and local LoRA files too."""
    request = absolute(job.request)
    workdir = Workdir.of_song(request.song, request.workdir).root.absolute()
    settings = absolute(job.settings)
    loras = (Lora(str(Path(x.source).absolute()), x.weight) if Path(x.source).is_file() else x for x in settings.lora)
    return dataclasses.replace(
        job,
        request=dataclasses.replace(request, workdir=workdir),
        settings=dataclasses.replace(settings, lora=Loras(loras)),
        output=job.output.absolute(),
    )


# Model names that are never paths, whatever a folder of this machine is called (musicvid.models.loading)
NAMES_NOT_PATHS = frozenset({AUTO_UPSCALER, LANCZOS, TINY})


def sent_choice(choice: ModelChoice) -> ModelChoice:
    """The models as a Ray worker gets them: a model named by a file or folder of this machine's (a relative one as
    the checks read it, against this folder) made absolute, as a job's paths are (sent)."""
    names = {
        f.name: str(Path(value).absolute())
        for f in dataclasses.fields(choice)
        if f.name not in ("models", "asr", "device", "precision")
        and isinstance(value := getattr(choice, f.name), str)
        and value not in NAMES_NOT_PATHS
        and Path(value).exists()
    }
    return dataclasses.replace(choice, **names)


def render_on_ray(plan: RayPlan, choice: ModelChoice, jobs: list[Job], finished) -> None:
    """Songs as tasks on Ray actors (`plan`). An actor whose process dies is restarted and its song retried once; a
    song that still fails is reported as failed, and a new actor takes the dead one's place. Models an actor refuses
    are said before any song. Stopped, the batch stops its actors before it lets go of -o."""
    import ray

    actor = ray.remote(num_cpus=1, num_gpus=plan.gpus, max_restarts=1, max_task_retries=1)(SongRenderer)
    models = sent_choice(choice)
    workers = [actor.remote(models) for _ in range(max(1, min(plan.workers, len(jobs))))]
    idle, waiting, running = list(workers), list(jobs), {}
    try:
        with signals_noted() as noted:
            check_refusals(workers)
            while waiting or running:
                while waiting and idle:
                    worker, job = idle.pop(), waiting.pop(0)
                    running[worker.render.remote(sent(job))] = (job, worker)
                ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_SECONDS)
                if noted:
                    raise Terminated(noted[0])
                if ready:
                    job, worker = running.pop(ready[0])
                    result, alive = result_of(ready[0], job)
                    if not alive:  # (Ray hands a dead actor's tasks back failed, at once)
                        ray.kill(worker)
                        workers.append(worker := actor.remote(models))
                    idle.append(worker)
                    finished(job, result)
    finally:  # none of its songs is written into -o once the batch lets go of it
        for worker in workers:
            ray.kill(worker)


def check_refusals(workers) -> None:
    """Refuse the batch, before any song, in the sentence of the first actor that refused its models; an actor
    that died as it started is left to fail its songs (result_of)."""
    import ray

    try:
        refused = ray.get([worker.refusal.remote() for worker in workers])
    except ray.exceptions.RayError:
        return
    if said := next((sentence for sentence in refused if sentence), None):
        raise UserError(said)


def result_of(ready, job: Job) -> tuple[Result, bool]:
    """A finished task's result: the worker's, or failed where the worker died twice on this song; and whether its
    actor is alive."""
    import ray

    try:
        return ray.get(ready), True
    except ray.exceptions.RayError as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        failed = Result(job.song, "failed", str(job.output), error=f"worker failed: {reason}")
        return failed, not isinstance(error, ray.exceptions.RayActorError)


# How often a Ray batch looks up from its wait for a signal: one raised inside Ray's wait comes out of it as a
# plain KeyboardInterrupt, and a SIGTERM or SIGHUP would be said as Ctrl-C
WAIT_SECONDS = 0.5


@contextlib.contextmanager
def signals_noted():
    """Within it, SIGTERM and SIGHUP are noted (the list it gives) rather than raised (vipe_core.errors.handled)."""
    noted: list[int] = []
    with handled(lambda signum, frame: noted.append(signum)):
        yield noted


def check_device_on_ray(device: str, cluster_gpus: float, gpus: float) -> None:
    """--device on Ray names a device each worker has, not one of this machine's (the head may have no GPU): CUDA
    where the cluster has GPUs and each worker asks for some, a worker's own from cuda:0."""
    import torch

    on = torch.device("cpu" if device == "auto" else device)
    if on.type == "cuda" and not (cluster_gpus and gpus):
        raise UserError(
            f"--device {device} on Ray needs GPUs for its workers: the cluster has {cluster_gpus:g}, and each worker "
            f"asks for {gpus:g} (--gpus-per-song)"
        )
    if on.type == "cuda" and (on.index or 0) >= max(1, math.ceil(gpus)):
        raise UserError(f"--device {device}: a Ray worker sees its own {gpus:g} GPU(s) only, as cuda:0 on")
