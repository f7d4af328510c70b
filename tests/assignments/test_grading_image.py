"""The grading image of ``otter grade`` (Docker) and Gradescope: the wheels it installs.

Docker is not run here. What can be checked without it: ``assignments/requirements.txt``
installs seqlearn and the grading plugin from wheels named by their place in the image;
every autograder zip of ``make assignments`` ships those wheels, built from this
repository; they are where each route puts the zip's files before ``setup.sh`` runs
(Gradescope unzips everything into /autograder/source first; otter grade's Dockerfile,
read from the installed otter, copies only what its first ``ADD`` names); and pip
installs them (``--no-deps`` into a scratch folder), with every module of seqlearn.
"""

from __future__ import annotations

import email
import fnmatch
import importlib.resources
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from grading import master_names
from layout import ROOT

sys.path.insert(0, str(ROOT / "tools" / "grading"))
import wheels  # noqa: E402

NAMES = master_names()
REQUIREMENTS = ROOT / "assignments" / "requirements.txt"
WHEELS = ROOT / "_build" / "wheels"


def version(pyproject: Path) -> str:
    return re.search(r'^version = "(.+)"$', pyproject.read_text(), re.M).group(1)


def autograder_zip(folder: Path) -> zipfile.ZipFile:
    zips = sorted((folder / "autograder").glob("*-autograder_*.zip"))
    assert len(zips) == 1, zips
    return zipfile.ZipFile(zips[0])


def test_requirements_install_the_wheels_of_this_release():
    named = wheels.named_wheels(REQUIREMENTS.read_text())
    expected = {
        "seqlearn": f"seqlearn-{version(ROOT / 'pyproject.toml')}-py3-none-any.whl",
        "seqlearn-grading": "seqlearn_grading-"
        f"{version(ROOT / 'tools' / 'grading' / 'pyproject.toml')}-py3-none-any.whl"}
    assert named == expected, (
        f"assignments/requirements.txt should install {expected} from "
        f"file://{wheels.IMAGE_SOURCE}/, it installs {named}")
    assert "git+" not in REQUIREMENTS.read_text(), "the image reaches no repository"


def before_setup_in_docker(archive: zipfile.ZipFile) -> set[str]:
    """The paths under /autograder/source that otter grade's image holds when setup.sh
    runs: what the Dockerfile's ADD lines before that RUN copy there (a folder's
    contents, not the folder)."""
    dockerfile = (importlib.resources.files("otter.grade") / "Dockerfile").read_text()
    before = dockerfile.split("setup.sh &&")[0]
    names = archive.namelist()
    present = set()
    for line in re.findall(r"^ADD (.+)$", before, re.M):
        *sources, target = line.split()
        if target.rstrip("/") != wheels.IMAGE_SOURCE:
            continue
        for pattern in sources:
            for name in names:
                top, _, rest = name.partition("/")
                if fnmatch.fnmatch(top, pattern):
                    present.add(f"{wheels.IMAGE_SOURCE}/{rest or top}")
    return present


@pytest.mark.parametrize("name", NAMES)
def test_autograder_zip_ships_the_wheels_where_the_image_finds_them(name, generated):
    archive = autograder_zip(generated[name])
    environment = yaml.safe_load(archive.read("environment.yml"))
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    files = [m.group(1) for line in pip
             if (m := re.search(r"@ file://(\S+)$", line))]
    assert len(files) == 2, f"{name}: the image should install two wheels, got {pip}"
    gradescope = {f"{wheels.IMAGE_SOURCE}/{n}" for n in archive.namelist()}
    docker = before_setup_in_docker(archive)
    assert "/autograder/source/setup.sh" in docker, "the Dockerfile was not understood"
    for path in files:
        assert path in gradescope, f"{name}: Gradescope would not find {path}"
        assert path in docker, f"{name}: otter grade's image would not find {path}"
        shipped = archive.read(path.removeprefix(f"{wheels.IMAGE_SOURCE}/"))
        assert shipped == (WHEELS / Path(path).name).read_bytes(), (
            f"{name}: the zip's {Path(path).name} is not the one make built")
        copy = archive.read(f"{wheels.DOCKER_FOLDER}/{Path(path).name}")
        assert copy == shipped


def test_wheels_hold_this_repository_and_install(generated, tmp_path):
    found = {path.name: path for path in WHEELS.glob("*.whl")}
    assert set(found) == set(wheels.named_wheels(REQUIREMENTS.read_text()).values())
    for wheel, package, source in (
            (f"seqlearn-{version(ROOT / 'pyproject.toml')}", "seqlearn", ROOT),
            ("seqlearn_grading-"
             f"{version(ROOT / 'tools' / 'grading' / 'pyproject.toml')}",
             "seqlearn_grading", ROOT / "tools" / "grading")):
        with zipfile.ZipFile(found[f"{wheel}-py3-none-any.whl"]) as archive:
            listed = set(archive.namelist())
            metadata = email.message_from_bytes(
                archive.read(f"{wheel}.dist-info/METADATA"))
        assert wheels.canonical(metadata["Name"]) == wheels.canonical(package)
        modules = {str(p.relative_to(source)) for p in (source / package).rglob("*.py")}
        assert modules and modules <= listed, sorted(modules - listed)[:5]
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", "--disable-pip-version-check", "--target",
                    str(target), *map(str, found.values())], check=True)
    where = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import seqlearn.bptt, seqlearn_grading; "
         "print(seqlearn.__file__); print(seqlearn_grading.__file__)", str(target)],
        capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(w).is_relative_to(target) for w in where), where
