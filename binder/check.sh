#!/usr/bin/env bash
# Builds a fresh virtual environment from exactly the binder files (requirements.txt;
# apt.txt's packages must be on the machine, as Binder installs them) and runs every
# notebook with nbval, as Binder's users would run them. Prints the time of each step
# and the installed size. Run from anywhere: bash binder/check.sh [VENV_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-$(mktemp -d)/binder-venv}"
# apt.txt has graphviz, whose dot draws the graph views.
command -v dot >/dev/null || { echo "graphviz (binder/apt.txt) is not installed here"; exit 1; }
# On a machine that cannot reach PyTorch's CPU index, pip takes torch from its other
# sources; without retries each package's lookup there fails at once instead of in 5 tries.
python3 -c "import socket; socket.getaddrinfo('download.pytorch.org', 443)" 2>/dev/null \
    || export PIP_RETRIES=0
start=$(date +%s)
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet -r binder/requirements.txt
installed=$(date +%s)
# The notebook server is Binder's own; nbval (with pytest) executes the notebooks here.
"$venv/bin/pip" install --quiet nbval pytest ipykernel
"$venv/bin/python" -m pytest -p no:cacheprovider -o addopts="" --nbval-lax -q notebooks
finished=$(date +%s)
echo "binder check: install $((installed - start)) s, notebooks $((finished - installed)) s," \
     "environment $(du -sh "$venv" | cut -f1) in $venv"
