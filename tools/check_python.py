"""Stop `make` at once, with a clear message, on a Python the pinned environment cannot use.

The exact pins in requirements.txt install on CPython 3.11.2 up to 3.13 (tried: 3.11.2, 3.11.7,
3.12.1, 3.13.0). Run by the Makefile with the interpreter it is about to build `.venv` from.
"""

import sys

SUPPORTED = ((3, 11, 2), (3, 14, 0))  # from 3.11.2 up to, not including, 3.14


def main() -> int:
    version = sys.version_info[:3]
    found = ".".join(map(str, version))
    if not SUPPORTED[0] <= version < SUPPORTED[1]:
        print(f"error: the book needs Python 3.11.2 to 3.13, but {sys.executable} is {found}.\n"
              "Install a supported Python and run, for example, `make test PYTHON=python3.12`.",
              file=sys.stderr)
        return 1
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        minor = f"{version[0]}.{version[1]}"
        print(f"error: {sys.executable} ({found}) cannot create virtual environments.\n"
              f"On Debian or Ubuntu: sudo apt install python{minor}-venv", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
