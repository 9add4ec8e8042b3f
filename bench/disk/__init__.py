"""How the harness writes to disk: atomic writes (`atomic`) and the checks that a place can take a write, with a
refused write named in one line (`writable`). The lowest layer that writes: models, results and runs all use it."""
