//! Perft: the six standard positions of the chessprogramming wiki and a 160-position suite.

use squall::{perft, Board};

macro_rules! perft_test {
    ($($name:ident: $fen:expr => [$($nodes:expr),+ $(,)?];)*) => {$(
        #[test]
        fn $name() {
            let board = Board::from_fen($fen).unwrap();
            let expected: &[u64] = &[$($nodes),+];
            for (depth, &nodes) in expected.iter().enumerate() {
                let depth = depth as u32 + 1;
                assert_eq!(perft::perft(&board, depth), nodes, "{} depth {depth}", $fen);
            }
            let shallow = (expected.len() as u32).min(4);
            assert_eq!(
                perft::perft_no_bulk(&board, shallow),
                expected[shallow as usize - 1],
                "no-bulk {} depth {shallow}", $fen
            );
        }
    )*};
}

perft_test! {
    start_position: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        => [20, 400, 8902, 197281, 4865609, 119060324];
    kiwipete: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
        => [48, 2039, 97862, 4085603, 193690690];
    position_3: "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
        => [14, 191, 2812, 43238, 674624, 11030083];
    position_4: "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"
        => [6, 264, 9467, 422333, 15833292];
    position_4_mirrored: "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1"
        => [6, 264, 9467, 422333, 15833292];
    position_5: "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"
        => [44, 1486, 62379, 2103487, 89941194];
    position_6: "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"
        => [46, 2079, 89890, 3894594, 164075551];
}

#[test]
fn suite_positions_are_exact() {
    let suite = include_str!("data/perftsuite.epd");
    let mut checked = 0;
    for (line_no, line) in suite.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(';');
        let fen = parts.next().unwrap().trim();
        let board = Board::from_fen(fen).unwrap_or_else(|e| panic!("line {}: {e}", line_no + 1));
        for entry in parts {
            let mut words = entry.split_whitespace();
            let depth: u32 = words.next().unwrap()[1..].parse().unwrap();
            let nodes: u64 = words.next().unwrap().parse().unwrap();
            assert_eq!(
                perft::perft(&board, depth),
                nodes,
                "line {}: {fen} depth {depth}",
                line_no + 1
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} suite entries");
}
