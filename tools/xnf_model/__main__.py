# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
`python3 -m xnf_model ARGS` runs the command line of the batching model
(`xnf model ARGS`) and exits with its status; `xnf model` execs this with
PYTHONPATH set to the directory that holds the package (tools/ of a source
tree, or the installed site directory).
"""
import sys

from .cli import main

sys.exit(main())
