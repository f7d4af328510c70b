"""Fixtures for the browser tests: loopback web servers, headless Chromium, JupyterLab.

Everything is served from 127.0.0.1 by this process (or, for JupyterLab, by a child process
started from the project's venv); nothing is fetched from the network.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from layout import ROOT

# SEQLEARN_BOOK_HTML: test a book built elsewhere (jupyter-book build . --path-output DIR)
HTML = Path(os.environ.get("SEQLEARN_BOOK_HTML", ROOT / "_build" / "html"))
WINDOW = (1366, 900)  # a common laptop screen: figures must be legible at this width


COMPRESSED = (".html", ".js", ".css", ".svg", ".json", ".txt", ".ipynb")
"""What GitHub Pages, the book's host, sends gzip-compressed (images and fonts go as they are)."""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A static server that compresses text as the book's host does, so that the browser's
    transfer sizes are what a reader downloads."""

    def log_message(self, *args) -> None:  # keep the test output readable
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (wants_gzip and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` on a free loopback port; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def book_url():
    if not (HTML / "index.html").is_file():
        pytest.fail("the book is not built: run `make book` first")
    with serve(HTML) as url:
        yield url


@contextlib.contextmanager
def chromium(env: dict[str, str] | None = None):
    """Headless Chromium driven by selenium; ``env``: the browser's environment variables
    (default: this process's), e.g. a FONTCONFIG_FILE that limits its fonts."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        pytest.fail("Debian's chromium and chromium-driver are needed: `make browser-deps`")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    profile = tempfile.mkdtemp(prefix="seqlearn-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver, env=env),
                              options=options)
    driver.set_page_load_timeout(90)
    driver.set_script_timeout(90)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    with chromium() as driver:
        yield driver


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# JupyterLab as a reader meets it, minus what a test cannot use: every cell rendered (no
# virtual scrolling), no news pop-up.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
}


@pytest.fixture(scope="session")
def lab_url():
    """JupyterLab with jupyterlab-myst, from the project's venv, on a loopback port."""
    home = Path(tempfile.mkdtemp(prefix="seqlearn-lab-"))
    for name, value in LAB_SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port = _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTER_DATA_DIR=str(home / "data"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", "--IdentityProvider.token=",
               "--ServerApp.password=", f"--ServerApp.root_dir={ROOT}",
               f"--LabApp.user_settings_dir={home / 'settings'}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}"]
    log = open(home / "lab.log", "w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"JupyterLab did not start: {(home / 'lab.log').read_text()[-2000:]}")
            time.sleep(0.5)
    yield url
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()
    shutil.rmtree(home, ignore_errors=True)
