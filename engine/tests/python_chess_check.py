#!/usr/bin/env python3
"""Manual UCI compatibility check against python-chess (`pip install chess`).

Not part of `cargo test` (the Rust suite must not need Python). Run it after building:

    cargo build --release -p squall
    python3 engine/tests/python_chess_check.py [path/to/squall]

It configures Hash, plays a short game against itself with several kinds of limits (depth,
nodes, movetime, clock), runs an infinite analysis that is stopped, and checks every move the
engine returns is legal. Exit status 0 means python-chess and squall understood each other.
"""

import sys
import time

import chess
import chess.engine

DEFAULT_BINARY = "target/release/squall"


def main() -> int:
    binary = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINARY
    with chess.engine.SimpleEngine.popen_uci(binary, timeout=30) as engine:
        print(f"engine: {engine.id.get('name')!r}, author {engine.id.get('author')!r}")
        assert engine.id.get("name", "").startswith("squall"), engine.id
        assert "Hash" in engine.options, engine.options
        engine.configure({"Hash": 32})

        board = chess.Board()
        limits = [
            chess.engine.Limit(depth=4),
            chess.engine.Limit(nodes=5000),
            chess.engine.Limit(time=0.1),
            chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.05, black_inc=0.05),
        ]
        for ply in range(16):
            if board.is_game_over():
                break
            limit = limits[ply % len(limits)]
            result = engine.play(board, limit, info=chess.engine.INFO_ALL)
            assert result.move in board.legal_moves, (board.fen(), result.move)
            print(f"ply {ply + 1:2}: {board.san(result.move):7} {limit} info {dict(result.info)}")
            board.push(result.move)

        # Analysis without a limit must stream info and stop cleanly when asked.
        with engine.analysis(board) as analysis:
            start = time.monotonic()
            for info in analysis:
                if time.monotonic() - start > 0.5:
                    break
            analysis.stop()
            best = analysis.wait()
        print(f"analysis stopped after {time.monotonic() - start:.2f} s, best {best.move}")
        assert best.move in board.legal_moves

        # A checkmated side has no move: the engine must still answer.
        mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
        info = engine.analyse(mated, chess.engine.Limit(depth=2))
        print(f"checkmated position: {info}")
    print("python-chess check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
