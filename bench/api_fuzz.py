"""Schemathesis against a real Daphne server, over every operation of /api/openapi.json, as an
authenticated member (the owner alice's API token): every phase (the schema's examples, its
coverage of edge values, fuzzing and stateful sequences), valid and invalid data, once on the
workspace and task that exist and once on whatever ids it generates.

    python bench/api_fuzz.py                  # about 2 minutes per pass
    python bench/api_fuzz.py --max-time 600   # longer

The site is seeded as tests/realtime/live.py does (SQLite; ``--database-url`` and
``--redis-url`` for production mode). Prints the cases run and the server errors (5xx) found per
pass, and the server's log lines about them; figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realtime.live import LiveSite  # noqa: E402

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def run_pass(
    url: str, token: str, directory: Path, name: str, max_time: int, ids: dict[str, int] | None
) -> dict[str, int]:
    config = directory / f"{name}.toml"
    lines = ["[generation]", 'mode = "all"', ""]
    if ids:
        lines += ["[parameters]"] + [f'"path.{key}" = {value}' for key, value in ids.items()]
    config.write_text("\n".join(lines) + "\n")
    report = directory / f"{name}-report"
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(config),
        "run",
        url,
        "--header",
        f"Authorization: Bearer {token}",
        "--checks",
        "not_a_server_error",
        "--max-time",
        str(max_time),
        "--workers",
        "1",  # hypothesis is not thread-safe enough for more (a RuntimeError inside it)
        "--report",
        "ndjson",
        "--report-dir",
        str(report),
        "--continue-on-failure",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=directory)
    (directory / f"{name}.out").write_text(result.stdout + result.stderr)
    output = result.stdout
    generated = re.search(r"(\d+) generated", output)
    server_errors = re.search(r"Server error: (\d+)", output)
    internal = re.search(r"Runtime Error: (\d+)", output)
    cases = int(generated.group(1)) if generated else 0
    failures = int(server_errors.group(1)) if server_errors else 0
    summary = output.strip().splitlines()[-1] if output.strip() else "(no output)"
    print(
        f"{name}: cases={cases} server_errors={failures}"
        f" schemathesis_errors={internal.group(1) if internal else 0} ({summary.strip('= ')})"
    )
    return {"cases": cases, "errors": failures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--max-time", type=int, default=120, help="seconds per pass")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="collab-api-fuzz-"))
    site = LiveSite(
        directory / "site",
        redis_url=args.redis_url,
        database_url=args.database_url,
        settings={"LOG_LEVEL": "ERROR"},
    )
    try:
        cast = site.prepare()
        # HTML pages (a 404 for a path no route matches) need the static files' manifest
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
            cwd=ROOT,
            env=site.env(),
            check=True,
        )
        server = site.start()
        url = f"http://127.0.0.1:{server.port}/api/openapi.json"
        token = cast.tokens["alice"]
        ids = {"workspace_id": 1, "task_id": cast.task_id}
        totals = [
            run_pass(url, token, directory, "real-ids", args.max_time, ids),
            run_pass(url, token, directory, "any-ids", args.max_time, None),
        ]
        print(
            f"total: cases={sum(t['cases'] for t in totals)}"
            f" server_errors={sum(t['errors'] for t in totals)}"
            f" load={os.getloadavg()[0]:.1f}"
        )
        errors = [
            line
            for line in server.log_path.read_text(errors="replace").splitlines()
            if "Error" in line or "Traceback" in line
        ]
        print(f"server log error lines: {len(errors)}")
        for line in errors[:20]:
            print("  " + line[:300])
        for name in ("real-ids", "any-ids"):
            failures = (directory / f"{name}.out").read_text().split("FAILURES", 1)
            if len(failures) > 1:
                print(f"{name} failures:\n" + failures[1][:3000])
        print(f"details: {directory}")
    finally:
        site.close()


if __name__ == "__main__":
    main()
