"""A run whose output goes to a log file (CI, nohup) still shows it is alive: a plain line every few seconds."""

from __future__ import annotations

import io

from bench.run.terminal import PlainProgress


def test_off_a_terminal_progress_is_a_plain_line_every_few_seconds_and_at_the_end() -> None:
    now = [0.0]
    log = io.StringIO()
    with PlainProgress(every_s=5.0, stream=log, clock=lambda: now[0]) as progress:
        task = progress.add_task("ingest dev", total=40)
        for _ in range(40):
            now[0] += 0.5  # 20 s in all: a line at 5, 10, 15 and 20 s, the last one being the finished task
            progress.advance(task)
    lines = log.getvalue().splitlines()
    assert lines[0] == "ingest dev: 10/40 (25%), 5 s"
    assert lines[-1] == "ingest dev: 40/40 (100%), 20 s"
    assert len(lines) == 4 and "\x1b" not in log.getvalue()  # no terminal escapes in a log file
