"""pytest puts this folder on sys.path, so tests import the shared helpers of ``layout.py``."""
