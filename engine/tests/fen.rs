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

#[test]
fn a_long_rank_is_counted_not_wrapped() {
    // Thirty-two 8s and `4k3` are 264 squares; counted in a byte they wrapped to 8.
    let fen = format!("{}4k3/8/8/8/8/8/8/4K3 w - - 0 1", "8".repeat(32));
    let message = error(&fen).to_string();
    assert!(
        message.contains("rank 8 has 264 squares, more than 8"),
        "{message}"
    );
    let message = error("8/8/8/8/8/8/8/4K2k1 w - - 0 1").to_string();
    assert!(
        message.contains("rank 1 has 9 squares, more than 8"),
        "{message}"
    );
}

#[test]
fn unreachable_material_is_refused() {
    let cases = [
        // 28 queens, rooks and bishops: 276 moves, past the move list's capacity.
        (
            "QQQQQQQQ/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/BR5Q/kBQQQKQQ w - - 0 1",
            "white has 28 pieces, more than 16",
        ),
        (
            "4k3/pppppppp/p7/8/8/8/8/4K3 b - - 0 1",
            "black has 9 pawns, more than 8",
        ),
        // A second queen with all eight pawns still on the board.
        (
            "4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1",
            "white has 1 promoted pieces but only 0 missing pawns",
        ),
        // Three rooks and three knights with seven pawns: two promotions, one missing pawn.
        (
            "rrr1k3/nnn5/pppppp1p/8/8/8/8/4K3 w - - 0 1",
            "black has 2 promoted pieces but only 1 missing pawns",
        ),
        // Two bishops on dark squares (a1, c1) with eight pawns.
        (
            "4k3/8/8/8/8/8/PPPPPPPP/B1B1K3 w - - 0 1",
            "white has 1 promoted pieces but only 0 missing pawns",
        ),
    ];
    for (fen, reason) in cases {
        let message = error(fen).to_string();
        assert!(message.contains("piece placement"), "{fen}: {message}");
        assert!(
            message.contains(reason),
            "{fen}: `{message}` lacks `{reason}`"
        );
    }
    // Reachable: promotions paid for by missing pawns, and two bishops on opposite colours.
    for fen in [
        "4k3/8/8/8/8/8/PPPPPPP1/QQ2K3 w - - 0 1",
        "QQQQ4/QQQQQ3/8/8/8/8/8/4K2k b - - 0 1",
        "4k3/8/8/8/8/8/PPPPPPPP/2B1KB2 w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ] {
        Board::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    }
}

#[test]
fn the_record_position_has_218_moves() {
    // Petrović (1964): the most legal moves a reachable position has.
    let board = Board::from_fen("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1").unwrap();
    assert_eq!(squall::movegen::legal_moves(&board).len(), 218);
    assert_eq!(squall::movegen::count_legal_moves(&board), 218);
    assert_eq!(squall::perft::divide(&board, 1).len(), 218);
}

#[test]
fn counters_are_plain_numbers_in_range() {
    let most = "4k3/8/8/8/8/8/8/4K3 w - - 65535 65535";
    assert_eq!(Board::from_fen(most).unwrap().to_fen(), most);
    assert_eq!(
        Board::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 007 010")
            .unwrap()
            .to_fen(),
        "4k3/8/8/8/8/8/8/4K3 w - - 7 10"
    );
    let cases = [
        (
            "0 65536",
            "fullmove number",
            "`65536` is out of range (1..=65535)",
        ),
        (
            "65536 1",
            "halfmove clock",
            "`65536` is out of range (0..=65535)",
        ),
        (
            "99999999999999999999999 1",
            "halfmove clock",
            "is out of range (0..=65535)",
        ),
        (
            "+5 1",
            "halfmove clock",
            "`+5` is not a plain number (digits only, no sign)",
        ),
        ("0 +1", "fullmove number", "`+1` is not a plain number"),
        ("-0 1", "halfmove clock", "`-0` is not a plain number"),
        ("0 1.5", "fullmove number", "`1.5` is not a number"),
        ("0 0", "fullmove number", "`0` is not a positive number"),
    ];
    for (counters, field, reason) in cases {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - {counters}");
        let message = error(&fen).to_string();
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
