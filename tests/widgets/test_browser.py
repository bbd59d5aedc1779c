"""The widgets in a real browser: JupyterLab headless, driven by Playwright and Chromium.

A notebook shows the four widgets; the test runs all its cells, types a loop into the
ScheduleExplorer, clicks "split", checks that the TVMScript on the page changed, and
saves a screenshot of every widget under ``test-artifacts/browser/``.

Needs Chromium (Debian: ``apt-get install chromium``; ``.ci/run`` installs it) and the
``playwright`` and ``jupyterlab`` packages of the ``test`` extra. Playwright's own
browser download is not used: the test launches the system Chromium.
"""
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
INSTALL = ("install Chromium (apt-get install -y --no-install-recommends chromium) and the "
           "test extra (pip install -e '.[test]': playwright, jupyterlab)")
WAIT_MS = 90_000

CELLS = {
    "explorer": '''from mlcbench.script import ir as I, tir as T
from mlcbench_widgets import GraphView, PassViewer, ScheduleExplorer, TuningDashboard

@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

ScheduleExplorer(Matmul)''',
    "pass_viewer": "PassViewer(Matmul)",
    "graph_view": '''from mlcbench.driver.models import export_digits_model
GraphView(export_digits_model("mlp", 1)[0])''',
    "tuning_dashboard": '''import tempfile
from mlcbench import meta_schedule as ms

def stochastic_schedule_mm(sch):
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    sch.reorder(i0, j0, i1, k, j1)
    return sch

work_dir = tempfile.mkdtemp(prefix="tune_")
dashboard = TuningDashboard(work_dir)
display(dashboard)
ms.tune_tir(Matmul, "llvm --num-cores=2", work_dir, 8, num_trials_per_iter=4,
            space=stochastic_schedule_mm, strategy="replay-trace", cost_model="random",
            seed=0, progress_bar=False, callbacks=[dashboard])
dashboard.select_round(0)''',
}


def _missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found; {INSTALL}"
    try:
        import jupyterlab  # noqa: F401 -- only checking that it is installed
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        return f"{err.name} is not installed; {INSTALL}"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_lab_config(config_dir: pathlib.Path) -> None:
    """No news or update checks: they would reach out to the network and pop up toasts."""
    labconfig = config_dir / "labconfig"
    labconfig.mkdir(parents=True)
    disabled = {"@jupyterlab/apputils-extension:announcements": True}
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}))


def _wait_for_server(proc, url: str, log: pathlib.Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab on a free localhost port with a token, serving a temporary folder that
    holds the test notebook; yields the notebook's URL and shuts the server down."""
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    root.mkdir()
    notebook = new_notebook(cells=[new_code_cell(src) for src in CELLS.values()],
                            metadata={"kernelspec": {"name": "python3", "language": "python",
                                                     "display_name": "Python 3"}})
    nbformat.write(notebook, root / "widgets.ipynb")
    _write_lab_config(home / "config")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    log = home / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
             f"--port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             "--LabApp.expose_app_in_browser=True",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly"]
            + (["--allow-root"] if os.geteuid() == 0 else []),
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for_server(proc, f"{base}/api/status?token={token}", log)
        yield f"{base}/lab/tree/widgets.ipynb?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def page(lab, tmp_path_factory):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            args=CHROMIUM_ARGS, headless=True, viewport={"width": 1400, "height": 2400})
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(lab)
            yield page
        finally:
            context.close()


_KERNEL_IDLE = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
                   && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && !panel.sessionContext.pendingInput;
}"""

_CELL_STATE = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = [];
    for (let k = 0; k < panel.content.model.cells.length; k++) {
        const cell = panel.content.model.cells.get(k);
        const outputs = cell.outputs ? cell.outputs.toJSON() : [];
        cells.push({count: cell.executionCount,
                    errors: outputs.filter(o => o.output_type === 'error')
                                   .map(o => o.ename + ': ' + o.evalue)});
    }
    return {cells, busy: panel.sessionContext.session.kernel.status !== 'idle'};
}"""


def _run_all_cells(page) -> None:
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_function(_KERNEL_IDLE)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(f"""() => {{
        const state = ({_CELL_STATE})();
        return !state.busy && state.cells.every(c => c.count !== null);
    }}""")
    errors = [e for cell in page.evaluate(_CELL_STATE)["cells"] for e in cell["errors"]]
    assert not errors, errors


def _output(page, name: str):
    return page.locator(".jp-Notebook .jp-Cell").nth(list(CELLS).index(name)) \
        .locator(".jp-OutputArea")


def _split_in_explorer(page, explorer) -> None:
    """Type loop j into the selection, click "split", wait for the new TVMScript."""
    explorer.locator("button", has_text="split").first.wait_for()
    script = explorer.locator(".widget-tab .widget-html-content").filter(visible=True) \
        .filter(has_text="prim_func").first
    before = script.inner_text()
    assert "j_1" not in before
    field = explorer.locator(".widget-text", has_text="selected").locator("input")
    field.fill("j")
    field.press("Enter")
    explorer.locator("button", has_text="split").first.click()
    page.wait_for_function("element => element.innerText.includes('j_1')",
                           arg=script.element_handle())
    after = script.inner_text()
    assert after != before and "j_0" in after
    explorer.get_by_text("step 1").first.wait_for()


def _screenshot(output, name: str) -> None:
    output.scroll_into_view_if_needed()
    path = ARTIFACTS / f"{name}.png"
    output.screenshot(path=str(path))
    assert path.stat().st_size > 5_000


def _dashboard_tabs(page, dashboard) -> None:
    """The cost-model tab, then "Open in ScheduleExplorer" on the best tab."""
    dashboard.locator(".lm-TabBar-tab", has_text="cost model").click()
    rounds = dashboard.locator(".widget-dropdown select").filter(visible=True).first
    rounds.wait_for()
    assert "rank corr." in rounds.inner_text().replace("\xa0", " ")
    dashboard.locator("img").filter(visible=True).first.wait_for()
    _screenshot(dashboard, "tuning_dashboard_cost_model")
    dashboard.locator(".lm-TabBar-tab", has_text="best").click()
    dashboard.locator("button", has_text="Open in ScheduleExplorer").click()
    dashboard.locator("button", has_text="split").first.wait_for()
    assert dashboard.get_by_text("tuned: ").count() > 0
    _screenshot(dashboard, "tuning_dashboard_best")


def test_widgets_render_click_and_screenshot(page):
    _run_all_cells(page)
    _split_in_explorer(page, _output(page, "explorer"))
    for name, expected in (("pass_viewer", "changed"), ("graph_view", "kernels:"),
                           ("tuning_dashboard", "8 trials")):
        _output(page, name).get_by_text(expected).first.wait_for()
    dashboard = _output(page, "tuning_dashboard")
    page.wait_for_function("""element => [...element.querySelectorAll('img')]
        .some(img => img.complete && img.naturalWidth > 0)""", arg=dashboard.element_handle())
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name in CELLS:
        _screenshot(_output(page, name), name)
    _dashboard_tabs(page, dashboard)
