"""Reads a run's JSON file where runs/ keeps it gzipped (NAME.json.gz) or where it lies
plain (runs/raw/ after `runs/data restore`, or a new run's own folder)."""
import gzip
import json
import os


def load_json(path):
    """The JSON at `path`, or at `path`.gz when only that exists."""
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    if os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt") as f:
            return json.load(f)
    raise FileNotFoundError(f"{path} (nor {path}.gz)")
