# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The batching model behind `xnf model`, as a package: model.py holds it
whole for now, and `python3 -m xnf_model` (__main__.py) runs its command
line; this file gathers its names for callers and tests.
"""
from .model import *  # noqa: F401,F403
