"""The ray engine (issue 11, item 7): documents run as Ray tasks on a local cluster and write
the run folders, and ``runs.jsonl``, the local engine writes, byte for byte (the manifest's
clock readings aside); the tasks share the response cache; an unreadable input is skipped
and counted, and a task's failure names its document.

The cluster tests need the ``ray`` extra (``pip install '.[ray]'``, as .ci/run does) and
are skipped without it; one small local cluster (2 CPUs, no dashboard) serves the module
and is shut down after it. The tests that Ray is optional run everywhere."""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import kgkit
from support.engine_support import ORGS, PEOPLE, write_inputs
from kgkit.cli import main
from kgkit.config.model import CacheConfig, Config, LLMConfig, RayConfig
from support.optional_parts import require_module
from support.stub_provider import Reply
from test_engine_concurrency import KEY_ENV, SlowModel, run_folder

TEXTS = {"north/memo.txt": "Ann Lee works for Acme Corp in Boston. Bob Stone joined Beta Ltd in Paris.\n",
         "south/memo.txt": "Cy Park founded Gamma Inc in Denver on May 4, 2019.\n",
         "notes.md": "# Notes\n\nDi Moss met Ed Fay of Delta Group in Oslo.\n",
         "empty.txt": ""}  # unreadable: skipped and counted by both engines


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """One local Ray cluster for the module. Its workers take the environment they are
    started with, so the provider key's variable and an empty skill library are set first."""
    ray = require_module("ray", part="ray")
    saved = {k: os.environ.get(k) for k in (KEY_ENV, "KGKIT_DATA_DIR", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update({KEY_ENV: "sk-test-ray", "KGKIT_DATA_DIR": str(tmp_path_factory.mktemp("ray-user-data")),
                       "RAY_USAGE_STATS_ENABLED": "0"})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
             object_store_memory=100 * 1024 * 1024)
    yield ray
    ray.shutdown()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    root = tmp_path / "corpus"
    for rel, text in TEXTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def extract_cli(args: list[str], capsys) -> tuple[int, dict, str]:
    with pytest.raises(SystemExit) as done:
        main(["extract", *args, "--json"])
    captured = capsys.readouterr()
    return done.value.code, json.loads(captured.out), captured.err


def test_a_corpus_on_ray_writes_the_local_engines_run_folders_offline(ray_cluster, corpus, tmp_path, capsys):
    local = extract_cli([str(corpus), "--out", str(tmp_path / "local"), "--view", "binary,nary"], capsys)
    on_ray = extract_cli([str(corpus), "--out", str(tmp_path / "ray"), "--view", "binary,nary", "--engine", "ray"],
                         capsys)

    assert on_ray[0] == local[0] == 1  # the empty input skipped, the others done
    assert [r["document"] for r in on_ray[1]["runs"]] == [r["document"] for r in local[1]["runs"]] == \
        ["notes", "north__memo", "south__memo"]
    assert on_ray[1]["skipped"] == local[1]["skipped"] == \
        [{"input": str(corpus / "empty.txt"), "error": f"{corpus / 'empty.txt'} is empty"}]
    assert f"Error: {corpus / 'empty.txt'}: skipped:" in on_ray[2]
    assert "[4/4] south__memo: ok" in on_ray[2]  # the same progress lines, from the driver
    folders = run_folder(tmp_path / "ray")
    assert folders == run_folder(tmp_path / "local")
    assert "runs.jsonl" in folders and len(folders) >= 3 * 4  # manifest, nodes, views, review per document
    assert all(r["edges"]["binary"] for r in on_ray[1]["runs"])


def stub_config(stub, engine: str, cache: Path) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0,
                    timeout=10.0, concurrency=4)
    return Config(llm=llm, cache=CacheConfig(dir=cache), chunk_size=220, chunk_overlap=0, engine=engine)


def distinct_inputs(folder: Path, i: int) -> dict[str, Path]:
    """write_inputs' domain and a three-chunk text of its own (no chunk shared with another
    document, so no cache hit depends on which document ran first)."""
    inputs = write_inputs(folder, paragraphs=3)
    paras = [f"{PEOPLE[(3 * i + k) % 8]} joined {ORGS[k % 2]} on March {10 * i + k + 1}, 2020 as an engineer. "
             + f"Team {i} met weekly. " * 7 for k in range(3)]
    inputs["doc"].write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return inputs


def test_on_the_stub_provider_ray_matches_the_local_engine_and_its_tasks_share_the_cache(
        ray_cluster, stub_provider, tmp_path):
    docs = [distinct_inputs(tmp_path / f"in{i}", i) for i in range(3)]
    stub_provider.responder = SlowModel(latency=0.01)
    events: dict[str, list] = {"local": [], "ray": []}

    def run(engine: str, out: str, cache: str, **kw):
        return kgkit.extract([d["doc"] for d in docs], domain=docs[0]["domain"], views=["binary", "nary"],
                             config=stub_config(stub_provider, engine, tmp_path / cache), out_dir=tmp_path / out,
                             skills=False, **kw)

    local = run("local", "local", "cache-local", progress=lambda *event: events["local"].append(event))
    sent = len(stub_provider.requests)
    stub_provider.requests.clear()
    on_ray = run("ray", "ray", "cache-ray", progress=lambda *event: events["ray"].append(event))

    assert sent == len(stub_provider.requests) == sum(r.manifest["calls"]["requests"] for r in local) == 3 * 3 * 3
    assert [r.run_dir.name for r in on_ray] == [r.run_dir.name for r in local]
    assert run_folder(tmp_path / "ray") == run_folder(tmp_path / "local")
    assert sorted(events["ray"]) == sorted(events["local"])  # a task's stage progress reaches the driver
    assert ("staff_notes", "nary", 3, 3) in events["ray"]

    stub_provider.requests.clear()
    again = run("ray", "ray-again", "cache-ray")  # every answer is in the cache the tasks wrote
    assert stub_provider.requests == []
    assert [r.manifest["calls"]["cache_hits"] for r in again] == [9, 9, 9]


def test_one_ray_worker_keeps_its_passes_in_flight_across_documents(ray_cluster, stub_provider, tmp_path):
    """A worker runs a share of the corpus through one pass pool: while one document's single
    entity pass is out, the next document's is sent too (one document a task at a time never
    has two requests out: its stages wait on each other). The model holds its answers until
    two requests are in flight, and gives up waiting after a few seconds if they never are."""
    docs = [distinct_inputs(tmp_path / f"in{i}", i) for i in range(4)]
    for i, d in enumerate(docs):  # one chunk each
        d["doc"].write_text(f"{PEOPLE[i]} joined {ORGS[i % 2]} on March {i + 1}, 2020 as an engineer.\n")
    model = stub_provider.responder = SlowModel(latency=0.05, gather=2, patience=5.0)

    def run(engine: str, out: str):
        cfg = stub_config(stub_provider, engine, tmp_path / f"cache-{out}")
        return kgkit.extract([d["doc"] for d in docs], domain=docs[0]["domain"], views=["binary"],
                             config=dataclasses.replace(cfg, ray=RayConfig(workers=1)), out_dir=tmp_path / out,
                             skills=False)

    on_ray = run("ray", "ray")
    assert model.most >= 2
    assert len(on_ray) == 4 and len(stub_provider.requests) == 4 * 2
    model.gather = 0
    run("local", "local")
    assert run_folder(tmp_path / "ray") == run_folder(tmp_path / "local")


@pytest.mark.parametrize("workers, count", [(None, 2), (1, 4)], ids=["one-document-shares", "two-document-shares"])
def test_a_failing_task_stops_the_run_naming_its_document(ray_cluster, stub_provider, tmp_path, workers, count):
    """The second document fails; with one worker and four documents it is the second of
    its task's share, after one that succeeded: the message names it, not the share."""
    docs = [write_inputs(tmp_path / f"in{i}", paragraphs=2) for i in range(count)]
    docs[1]["doc"].write_text("Zed Quill joined Beta Ltd on March 2, 2020 as an engineer.\n")
    model = SlowModel(latency=0.0)
    stub_provider.responder = lambda request: (Reply.error(401, "key revoked")  # the second document's passes
                                               if "Zed Quill" in json.dumps(request.body) else model(request))
    with pytest.raises(kgkit.errors.ProviderConfigError) as failed:
        kgkit.extract([d["doc"] for d in docs], domain=docs[0]["domain"], views=["binary"],
                      config=dataclasses.replace(stub_config(stub_provider, "ray", tmp_path / "cache"),
                                                 ray=RayConfig(workers=workers)),
                      out_dir=tmp_path / "out", skills=False)
    assert failed.value.exit_code == 2
    assert str(docs[1]["doc"]) in failed.value.message
    assert str(docs[0]["doc"]) not in failed.value.message


def test_a_corpus_is_cut_into_about_two_shares_a_worker_within_the_memory_budget(tmp_path, monkeypatch):
    from kgkit.engine import ray_engine
    from kgkit.engine.corpus import CorpusInput

    inputs = []
    for i in range(10):
        (tmp_path / f"d{i}.txt").write_text("Ann Lee works for Acme Corp.\n")
        inputs.append(CorpusInput(tmp_path / f"d{i}.txt", f"d{i}"))
    assert [len(s) for s in ray_engine.shares(inputs, 2)] == [3, 3, 3, 1]
    assert [len(s) for s in ray_engine.shares(inputs, 1)] == [5, 5]
    assert [len(s) for s in ray_engine.shares(inputs, 8)] == [1] * 10
    assert [x for s in ray_engine.shares(inputs, 2) for x in s] == inputs  # in input order, each once
    # a task holds its share's results: a share stops where its documents would pass the budget
    monkeypatch.setattr(ray_engine, "MEMORY_BUDGET", 2 * ray_engine.footprint(inputs[0]))
    assert [len(s) for s in ray_engine.shares(inputs, 1)] == [2, 2, 2, 2, 2]


def test_without_ray_the_ray_engine_exits_2_saying_how_to_install_it(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets without the extra
    with pytest.raises(SystemExit) as done:
        main(["extract", str(corpus), "--out", str(tmp_path / "out"), "--engine", "ray"])
    assert done.value.code == 2
    assert "pip install 'kgkit[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_local_engine_never_imports_ray(corpus, tmp_path):
    script = ("import sys\nfrom kgkit.cli import main\n"
              f"try:\n    main(['extract', {str(corpus)!r}, '--out', {str(tmp_path / 'out')!r}])\n"
              "except SystemExit:\n    pass\nassert 'ray' not in sys.modules, 'ray imported'\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1:] == ["ok"], done.stderr
    assert (tmp_path / "out" / "runs.jsonl").is_file()


def test_the_ray_engine_refuses_stdin_before_anything_runs(corpus, tmp_path):
    require_module("ray", part="ray")
    with pytest.raises(kgkit.errors.InputError, match="reads files, not stdin"):
        kgkit.extract([corpus / "notes.md", "-"], config=Config(engine="ray"), out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_ray_address_nothing_answers_at_is_a_config_error_at_once():
    from kgkit.engine.ray_engine import check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(kgkit.errors.ConfigError, match=f"nothing answers at 127.0.0.1:{port}"):
            check_reachable(address)
    check_reachable("auto")  # Ray's to resolve


def test_a_task_whose_worker_dies_is_run_again_and_the_run_folders_are_the_same(ray_cluster, corpus, tmp_path):
    """The first worker to build a backend dies on the spot (as if killed by the kernel); Ray
    reruns its task and the corpus ends as the local engine's does."""
    marker = tmp_path / "died-once"

    def dying_once(config, stage):  # sent to the workers by value
        import os as _os

        from kgkit.backends.factory import create_backend

        if not marker.exists():
            marker.write_text("x")
            _os._exit(1)
        return create_backend(config, stage)

    kgkit.extract(corpus, views="binary", out_dir=tmp_path / "local", skills=False)
    on_ray = kgkit.extract(corpus, views="binary", config=Config(engine="ray"), out_dir=tmp_path / "ray",
                           skills=False, backend=dying_once)
    assert marker.exists() and len(on_ray) == 3
    assert run_folder(tmp_path / "ray") == run_folder(tmp_path / "local")


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc: a local cluster's GCS, raylet and workers)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_sigterm_stops_a_ray_run_with_exit_130_and_its_local_cluster_with_it(stub_provider, corpus, tmp_path):
    """The installed ``kgkit`` (kgkit.cli.run) takes SIGTERM as Ctrl-C: the run stops with
    exit 130 and shuts the local cluster it started down, leaving no Ray process behind."""
    require_module("ray", part="ray")
    asked, release = threading.Event(), threading.Event()

    def held(request):  # the first pass reaches the provider, then waits for the test
        asked.set()
        release.wait(60)
        return Reply.error(503, "stopping")

    stub_provider.responder = held
    config = tmp_path / "kgkit.yaml"
    config.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {stub_provider.openai_base}\n"
                      f"  api_key_env: {KEY_ENV}\n  retries: 0\nengine: ray\nray:\n  workers: 1\n"
                      "cache:\n  enabled: false\n")
    env = {**os.environ, KEY_ENV: "sk-test-ray", "KGKIT_DATA_DIR": str(tmp_path / "data"),
           "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    child = subprocess.Popen([sys.executable, "-c", "from kgkit.cli import run; run()", "extract", str(corpus),
                              "--config", str(config), "--out", str(tmp_path / "out"), "--view", "binary"],
                             env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert asked.wait(120), "no pass reached the provider"
        cluster = _descendants(child.pid)
        assert cluster, "the run started no local cluster"
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)  # the held request would hold a graceful stop 60 s
    finally:
        release.set()
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err.decode()
    assert "Interrupted" in err.decode() and "Traceback" not in err.decode()
    deadline = time.monotonic() + 30
    while (left := {pid for pid in cluster if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:  # not left running after a failure either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"Ray processes left running: {sorted(left)}"
