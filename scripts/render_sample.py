"""Render sample mails of a fixed seeded bot game, for a person to look at.

    python scripts/render_sample.py [--out DIR] [--turn N] [--seed S] [--no-screenshot]

Writes to DIR (default ./sample-mails): the turn report of turn N as the
player who moved sees it (report.txt, report.html, the map picture
report-map.png, report.eml), the "your turn" notice and the game-start mail,
and, when Debian's chromium is installed (apt-get install -y chromium), a
screenshot of each HTML part taken by headless Chromium (report.png, ...).
The HTML is written with its cid: picture links pointing at the PNG files
next to it, so a browser shows it as a mail client would.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.report import (  # noqa: E402
    GameStart,
    RenderedMail,
    YourTurn,
    render_game_start,
    render_turn_report,
    render_your_turn,
    thread_root_id,
    to_mime,
)
from pbem.testing.sample import deadline, play_sample  # noqa: E402

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def write_mail(out: Path, stem: str, mail: RenderedMail, host: str) -> Path:
    """Write the text, the HTML (cid links made file links), the pictures, the .eml."""
    (out / f"{stem}.txt").write_text(mail.text, encoding="utf-8")
    html = mail.html
    for n, (cid, data) in enumerate(sorted(mail.images.items())):
        name = f"{stem}-map.png" if n == 0 else f"{stem}-picture-{n}.png"
        (out / name).write_bytes(data)
        html = html.replace(f"cid:{cid}", name)
    page = out / f"{stem}.html"
    page.write_text(html, encoding="utf-8")
    message = to_mime(
        mail,
        sender="pbem@pbem.example",
        recipient=mail.recipient,
        message_id=f"<{stem}.sample@{host}>",
        references=(thread_root_id(mail.game, 0, host),),
    )
    (out / f"{stem}.eml").write_bytes(message.as_bytes())
    return page


def screenshot(browser: str, page: Path, png: Path, width: int) -> bool:
    with tempfile.TemporaryDirectory(prefix="pbem-chromium-") as profile:
        command = [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={width},3600",
            page.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not png.exists():
        print(f"chromium failed on {page}: {done.stderr.strip()[-500:]}", file=sys.stderr)
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("sample-mails"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turn", type=int, default=6, help="the turn whose report to render")
    parser.add_argument("--width", type=int, default=980, help="screenshot width in pixels")
    parser.add_argument("--no-screenshot", action="store_true")
    args = parser.parse_args()

    sample = play_sample(seed=args.seed, turns=args.turn)
    report = sample.reports[args.turn - 1]
    args.out.mkdir(parents=True, exist_ok=True)
    host = "pbem.example"
    pages = {
        "report": write_mail(args.out, "report", render_turn_report(report, report.seat), host),
        "your-turn": write_mail(
            args.out,
            "your-turn",
            render_your_turn(
                YourTurn(
                    report.game,
                    report.after,
                    report.after.current,
                    "7f3a9c",
                    deadline(report.turn + 1),
                )
            ),
            host,
        ),
        "game-start": write_mail(
            args.out,
            "game-start",
            render_game_start(GameStart(sample.game, sample.start, 0, "correct-horse", None)),
            host,
        ),
    }
    for page in pages.values():
        print(f"wrote {page}")
    browser = chromium()
    if args.no_screenshot:
        return 0
    if browser is None:
        print("no chromium found (apt-get install -y chromium): no screenshots taken")
        return 0
    for stem, page in pages.items():
        png = args.out / f"{stem}.png"
        if screenshot(browser, page, png, args.width):
            print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
