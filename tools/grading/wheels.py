"""The wheels of seqlearn and of the grading plugin, shipped in every autograder zip.

    python tools/grading/wheels.py build _build/wheels
    python tools/grading/wheels.py ship _build/wheels _build/assignments/NAME/autograder

``build`` makes ``seqlearn-VERSION-py3-none-any.whl`` from the repository and
``seqlearn_grading-VERSION-py3-none-any.whl`` from ``tools/grading``, each from a copy
of its sources (the working tree gets no ``build/`` folder). ``ship`` adds both to the
autograder zip that ``otter assign`` wrote, after checking that the zip's
``requirements.txt`` names exactly these files.

The grading image (``otter grade``'s Docker image, or Gradescope's) installs the lines
of ``assignments/requirements.txt`` with pip while it runs ``setup.sh``, and that file
names the wheels by their place in the image::

    seqlearn @ file:///autograder/source/seqlearn-0.1.0-py3-none-any.whl

so the image holds exactly the book's seqlearn and plugin, with no repository to reach.
Two routes put a file of the zip at ``/autograder/source`` before ``setup.sh`` runs:
Gradescope unzips the whole zip there first; ``otter grade``'s Dockerfile copies only
``setup.sh``, ``environment.yml`` and ``requirements.*`` there first (the zip's
``files/`` and ``tests/`` come after ``setup.sh``), and Docker copies a folder's
contents, not the folder. The zip therefore holds each wheel twice: at its root
(Gradescope) and in the folder ``requirements.wheels/`` (Docker).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMAGE_SOURCE = "/autograder/source"
"""Where the grading image holds the autograder zip's contents (otter's default
``autograder_dir`` is /autograder)."""
DOCKER_FOLDER = "requirements.wheels"
"""The zip's folder whose contents otter grade's Dockerfile copies to IMAGE_SOURCE
before setup.sh (it matches its ``requirements.*``)."""
PACKAGES = {
    "seqlearn": (ROOT, ["pyproject.toml", "README.md", "seqlearn"]),
    "seqlearn_grading": (ROOT / "tools" / "grading", ["pyproject.toml",
                                                      "seqlearn_grading"]),
}
"""Each wheel: the folder of its pyproject.toml and what a build needs from it."""
WHEEL_LINE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*@\s*file://"
                        rf"{IMAGE_SOURCE}/(\S+\.whl)\s*$", re.M)


def build(out: Path) -> list[Path]:
    """Build both wheels into ``out`` (replacing older ones); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    built = []
    for name, (folder, needed) in PACKAGES.items():
        for old in out.glob(f"{name}-*.whl"):
            old.unlink()
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / name
            copy.mkdir()
            for item in needed:
                source = folder / item
                if source.is_dir():
                    shutil.copytree(source, copy / item,
                                    ignore=shutil.ignore_patterns("__pycache__",
                                                                  "*.egg-info"))
                else:
                    shutil.copy(source, copy / item)
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet",
                            "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "--wheel-dir", str(out),
                            str(copy)], check=True)
        built += out.glob(f"{name}-*.whl")
    return built


def canonical(name: str) -> str:
    """A package's name as pip compares it (``seqlearn_grading`` is
    ``seqlearn-grading``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def named_wheels(requirements: str) -> dict[str, str]:
    """``{package: wheel file}`` for the requirement lines that install a wheel from the
    image's copy of the autograder zip."""
    return {package: wheel for package, wheel in WHEEL_LINE.findall(requirements)}


def ship(wheels: Path, autograder: Path) -> Path:
    """Add the wheels of ``wheels`` to the autograder zip in ``autograder``; the zip."""
    zips = sorted(autograder.glob("*-autograder_*.zip"))
    if len(zips) != 1:
        raise SystemExit(f"expected one autograder zip in {autograder}, found {zips}")
    wanted = {canonical(package): wheel for package, wheel in
              named_wheels((autograder / "requirements.txt").read_text()).items()}
    have = {path.name: path for path in wheels.glob("*.whl")}
    built = {canonical(name.split("-")[0]): name for name in have}
    if wanted != built:
        raise SystemExit(f"{autograder / 'requirements.txt'} installs {wanted}, but "
                         f"the wheels built are {built}: the requirement lines should "
                         f"read `NAME @ file://{IMAGE_SOURCE}/WHEEL`")
    with zipfile.ZipFile(zips[0], "a", compression=zipfile.ZIP_DEFLATED) as archive:
        present = set(archive.namelist())
        for name, path in sorted(have.items()):
            for entry in (name, f"{DOCKER_FOLDER}/{name}"):
                if entry not in present:
                    archive.write(path, entry)
    return zips[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    building = commands.add_parser("build", help="build both wheels")
    building.add_argument("out", type=Path)
    shipping = commands.add_parser("ship", help="add the wheels to an autograder zip")
    shipping.add_argument("wheels", type=Path)
    shipping.add_argument("autograder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build":
        for path in build(args.out):
            print(f"built {path}")
    else:
        print(f"wheels added to {ship(args.wheels, args.autograder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
