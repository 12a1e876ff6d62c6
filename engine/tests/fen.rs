//! FEN parsing, printing and the typed errors for bad input.

use squall::board::FenError;
use squall::Board;

fn error(fen: &str) -> FenError {
    Board::from_fen(fen).expect_err(fen)
}

#[test]
fn round_trips() {
    let suite = include_str!("data/perftsuite.epd");
    for line in suite.lines().filter(|l| !l.trim().is_empty()) {
        let fen = line.split(';').next().unwrap().trim();
        let board = Board::from_fen(fen).unwrap();
        let printed = board.to_fen();
        let reparsed = Board::from_fen(&printed).unwrap();
        assert_eq!(board, reparsed, "{fen}");
        assert_eq!(printed, reparsed.to_fen());
    }
    for fen in [
        Board::STARTPOS,
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/8/8/8/8/8/8/K6k b - - 99 160",
    ] {
        assert_eq!(Board::from_fen(fen).unwrap().to_fen(), fen);
    }
}

#[test]
fn en_passant_square_without_capturer_is_dropped() {
    let board =
        Board::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
    assert_eq!(board.en_passant(), None);
    assert!(board.to_fen().contains(" b KQkq - 0 1"));
}

#[test]
fn epd_without_clocks_parses() {
    let board = Board::from_fen("4k3/8/8/8/8/8/8/4K2R w K -").unwrap();
    assert_eq!(board.to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
}

#[test]
fn bad_fens_name_the_field() {
    let cases = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQx - 0 1",
            "castling field",
            "`x`",
        ),
        (
            "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "piece placement",
            "character `9`",
        ),
        (
            "rnbqkbnr/pppppppp/44p/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "piece placement",
            "more than 8",
        ),
        (
            "rnbqkbnr/pppppppp/7/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "piece placement",
            "7 squares",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "piece placement",
            "expected 8 ranks",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBKR w kq - 0 1",
            "piece placement",
            "2 white kings",
        ),
        (
            "8/8/8/8/8/8/8/K7 w - - 0 1",
            "piece placement",
            "0 black kings",
        ),
        (
            "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1",
            "position",
            "side not to move is in check",
        ),
        ("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "side to move", "`x`"),
        (
            "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
            "castling field",
            "rook on h1",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - e9 0 1",
            "en-passant field",
            "not a square",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - e3 0 1",
            "en-passant field",
            "rank 6",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - e6 0 1",
            "en-passant field",
            "no pawn",
        ),
        ("4k3/8/8/8/8/8/8/4K3 w - - x 1", "halfmove clock", "`x`"),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 0 0",
            "fullmove number",
            "positive",
        ),
        ("4k3/8/8/8/8/8/8/4K3 w -", "position", "found 3"),
        (
            "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "piece placement",
            "pawn on rank 8",
        ),
        ("", "position", "found 0"),
    ];
    for (fen, field, reason) in cases {
        let message = error(fen).to_string();
        assert!(
            message.contains(field),
            "{fen}: `{message}` lacks `{field}`"
        );
        assert!(
            message.contains(reason),
            "{fen}: `{message}` lacks `{reason}`"
        );
    }
}
