//! The bench: a fixed-depth search over a list of positions, the lab's measuring protocol
//! (`docs/bench-protocol.md`). This module only searches and counts; the `squall` binary prints.
//!
//! Determinism is the point: the searcher is cleared before every position (transposition table,
//! pawn hash, killers, history, counters), the stop flag never fires and the only limit is depth,
//! so a given binary with given arguments always visits the same number of nodes.

use crate::board::Board;
use crate::counters::Counters;
use crate::search::{Limits, Searcher, Silent};
use crate::types::Move;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Search depth of `squall bench` without `--depth`; chosen so the default bench takes 2-10 s.
pub const DEFAULT_DEPTH: i32 = 11;

/// Transposition-table size of `squall bench` without `--hash`.
pub const DEFAULT_HASH_MB: usize = 16;

/// The built-in bench positions: openings, middlegames and endgames, with every material bucket
/// (`tier::material_bucket`) present at least twice so per-bucket exit rates are never empty.
/// The order and content are part of the bench signature: changing them changes the node count.
pub const BENCH_POSITIONS: &[&str] = &[
    // Bucket 7: openings and full-army middlegames.
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "rnbqkb1r/ppp1pppp/5n2/3p4/2PP4/8/PP2PPPP/RNBQKBNR w KQkq - 1 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    // Bucket 6: middlegames after a couple of minor-piece trades.
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "r2q1rk1/pp2bppp/2p1p3/3n4/3P4/2NB4/PPP2PPP/R2QR1K1 w - - 0 12",
    "r4rk1/pp1b1ppp/2n1p3/q7/3P4/P1PB1N2/4QPPP/R4RK1 w - - 0 14",
    // Bucket 5: queenless middlegames and unbalanced ones.
    "r1b2rk1/pp3ppp/2n1pn2/2b5/8/2N2N2/PPP1BPPP/R1B2RK1 w - - 0 10",
    "r3k2r/ppp2ppp/2n1bn2/2b1p3/4P3/2NB1N2/PPP2PPP/R1B1K2R w KQkq - 0 8",
    "6k1/3b3r/1p1p4/p1n2p2/1PPNpP1q/P3Q1p1/1R1RB1P1/5K2 b - - 0 1",
    "r2r1n2/pp2bk2/2p1p2p/3q4/3PN1QP/2P3R1/P4PP1/5RK1 w - - 0 1",
    // Bucket 4: late middlegames.
    "2r2rk1/pp2bppp/2n1pn2/8/3N4/2N1B3/PP3PPP/2RR2K1 w - - 0 15",
    "1r3k2/4q3/2Pp3b/3Bp3/2Q2p2/1p1P2P1/1P2KP2/3N4 w - - 0 1",
    "5rk1/q6p/2p3bR/1pPp1rP1/1P1Pp3/P3B1Q1/1K6/8 w - - 0 1",
    // Bucket 3: heavy-piece and queen-plus-minor endings.
    "2r3k1/5pp1/p3p2p/1p1q4/3P4/P3Q2P/1P3PP1/2R3K1 w - - 0 30",
    "3r2k1/1p3ppp/p1b1p3/4P3/2rN4/P1R5/1P3PPP/3R2K1 w - - 0 25",
    "6k1/p4pp1/1p2p2p/3qn3/8/1P2QN1P/P4PP1/6K1 w - - 0 30",
    // Bucket 2: queen endings, rook-and-minor endings, two rooks against a queen.
    "8/6pk/1p6/8/PP3p1p/5P2/4KP1q/3Q4 w - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 1",
    "r4rk1/5ppp/8/8/8/8/5PPP/R4RK1 w - - 0 1",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    // Bucket 1: rook endings and three bishops.
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "8/3k4/8/8/8/4B3/4KB2/2B5 w - - 0 1",
    "8/8/1P6/5pr1/8/4R3/7k/2K5 w - - 0 1",
    // Bucket 0: pawn and minor-piece endings, plus a stalemate (no legal move).
    "8/2p5/8/2kPKp1p/2p4P/2P5/3P4/8 w - - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/8 b - - 0 1",
    "8/3p3B/5p2/5P2/p7/PP5b/k7/6K1 w - - 0 1",
    "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
    "8/8/4k3/8/2K5/8/3P4/8 w - - 0 1",
    "7k/7P/6K1/8/3B4/8/8/8 b - - 0 1",
];

/// The built-in positions as boards.
pub fn default_positions() -> Vec<Board> {
    BENCH_POSITIONS
        .iter()
        // The list is a constant checked by this module's tests, so a failure is a build bug.
        .map(|fen| Board::from_fen(fen).expect("built-in bench FEN is valid"))
        .collect()
}

/// One searched position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionResult {
    pub fen: String,
    /// Every node of this search, main and quiescence (`Counters::nodes`).
    pub nodes: u64,
    pub time_ns: u64,
    /// `Move::NULL` (printed `0000`) when the position has no legal move.
    pub bestmove: Move,
    /// From the side to move's point of view; mates as ±(MATE - plies).
    pub score_cp: i32,
}

/// The whole bench: per-position results and the counters summed over all positions.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub positions: Vec<PositionResult>,
    pub totals: Counters,
    /// Sum of the per-position search times (setup between positions is not counted).
    pub time_ns: u64,
    pub depth: i32,
    pub hash_mb: usize,
    pub full_eval: bool,
}

impl BenchReport {
    /// Nodes per second over the summed search time; 0 if no time was measured.
    pub fn nps(&self) -> u64 {
        if self.time_ns == 0 {
            return 0;
        }
        (u128::from(self.totals.nodes) * 1_000_000_000 / u128::from(self.time_ns)) as u64
    }
}

/// Searches every position to `depth` with a cleared searcher, calling `on_position` after each
/// (index from 0) so a caller can print progress.
pub fn run(
    positions: &[Board],
    depth: i32,
    hash_mb: usize,
    full_eval: bool,
    mut on_position: impl FnMut(usize, &PositionResult),
) -> BenchReport {
    let mut searcher = Searcher::new(hash_mb);
    searcher.set_full_eval(full_eval);
    let limits = Limits::depth(depth);
    // Never set: the bench stops on depth only, which is what makes it deterministic.
    let stop = AtomicBool::new(false);
    let mut report = BenchReport {
        positions: Vec::with_capacity(positions.len()),
        totals: Counters::default(),
        time_ns: 0,
        depth,
        hash_mb,
        full_eval,
    };
    for (index, board) in positions.iter().enumerate() {
        searcher.clear();
        let start = Instant::now();
        let result = searcher.search(board, &[], &limits, &stop, &mut Silent);
        let time_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let counters = searcher.counters();
        let position = PositionResult {
            fen: board.to_fen(),
            nodes: counters.nodes,
            time_ns,
            bestmove: result.best_move,
            score_cp: result.score_cp,
        };
        report.totals.add(counters);
        report.time_ns = report.time_ns.saturating_add(time_ns);
        on_position(index, &position);
        report.positions.push(position);
    }
    report
}

/// Parses a positions file: one FEN or EPD per line; blank lines and `#` comments are skipped,
/// and so is a UTF-8 byte-order mark at the start. EPD operations are ignored: a line is cut at
/// its first `;`. After the four placement/side/castling/en-passant fields a line has either
/// the two move counters (a FEN) or EPD operations, whose opcodes start with a letter; anything
/// else (a halfmove clock alone, a signed counter) is an error. A bad line is reported as its
/// 1-based line number and the reason.
pub fn parse_positions(text: &str) -> Result<Vec<Board>, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut boards = Vec::new();
    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = raw_line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let before_operations = line.split(';').next().unwrap_or_default();
        let fields: Vec<&str> = before_operations.split_whitespace().collect();
        if fields.len() < 4 {
            return Err((
                line_number,
                format!("expected a FEN or EPD, found {} field(s)", fields.len()),
            ));
        }
        let is_opcode = |field: &str| field.starts_with(|c: char| c.is_ascii_alphabetic());
        let fen_fields = match fields.get(4) {
            None => 4,
            Some(&field) if is_opcode(field) => 4,
            // Move counters: both must be there (the FEN parser checks them).
            Some(&field) if fields.len() == 5 => {
                return Err((
                    line_number,
                    format!(
                        "5 fields: `{field}` after the en-passant field, but no fullmove \
                         number (a FEN has 6 fields; an EPD has 4, then operations)"
                    ),
                ))
            }
            Some(_) => 6,
        };
        if let Some(&extra) = fields.get(fen_fields).filter(|&&f| !is_opcode(f)) {
            return Err((
                line_number,
                format!("unexpected `{extra}` after the FEN (EPD operations start with a letter)"),
            ));
        }
        let fen = fields[..fen_fields].join(" ");
        let board = Board::from_fen(&fen).map_err(|e| (line_number, e.to_string()))?;
        boards.push(board);
    }
    Ok(boards)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::{material_bucket, MATERIAL_BUCKETS};

    #[test]
    fn built_in_positions_are_valid_and_varied() {
        assert!(BENCH_POSITIONS.len() >= 30);
        let boards = default_positions();
        let mut per_bucket = [0usize; MATERIAL_BUCKETS];
        for board in &boards {
            per_bucket[material_bucket(board)] += 1;
        }
        for (bucket, &count) in per_bucket.iter().enumerate() {
            assert!(
                count >= 2,
                "material bucket {bucket} has {count} positions: {per_bucket:?}"
            );
        }
        let mut fens: Vec<String> = boards.iter().map(Board::to_fen).collect();
        fens.sort();
        fens.dedup();
        assert_eq!(
            fens.len(),
            BENCH_POSITIONS.len(),
            "duplicate bench position"
        );
    }

    #[test]
    fn parses_fen_and_epd_lines() {
        let text = "\
# a comment

rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66
4k3/8/8/8/8/8/8/4K2R w K - bm Rh8+; id \"mate\";
4k3/8/8/8/8/8/8/4K2R w K -
  4k3/8/8/8/8/8/8/4K2R w K - 3 40  
";
        let boards = parse_positions(text).unwrap();
        assert_eq!(boards.len(), 5);
        assert_eq!(boards[0], Board::startpos());
        assert_eq!(boards[1].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(boards[2].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(boards[3].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(boards[4].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 3 40");
    }

    #[test]
    fn reports_the_bad_line_number() {
        let text = "# header\n8/8/8/8/8/8/8/K6k w - - 0 1\n\nnot a fen\n";
        let (line, reason) = parse_positions(text).unwrap_err();
        assert_eq!(line, 4);
        assert!(!reason.is_empty());
        let (line, _) =
            parse_positions("8/8/8/8/8/8/8/K6k w - - 0 1\n8/8/8/8/8/8/8/8 w - - 0 1").unwrap_err();
        assert_eq!(line, 2);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let boards = parse_positions("\u{feff}4k3/8/8/8/8/8/8/4K2R w K - 0 1\n").unwrap();
        assert_eq!(boards[0].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        let boards = parse_positions("\u{feff}# a comment\n4k3/8/8/8/8/8/8/4K2R w K -\n").unwrap();
        assert_eq!(boards.len(), 1);
    }

    #[test]
    fn counters_are_both_there_or_neither() {
        for (text, reason) in [
            (
                "4k3/8/8/8/8/8/8/4K2R w K - 0",
                "5 fields: `0` after the en-passant field, but no fullmove number",
            ),
            ("4k3/8/8/8/8/8/8/4K2R w K - 0 ; c0 \"x\"", "5 fields"),
            (
                "4k3/8/8/8/8/8/8/4K2R w K - +5 1",
                "`+5` is not a plain number",
            ),
            ("4k3/8/8/8/8/8/8/4K2R w K - 0 bm", "`bm` is not a number"),
            (
                "4k3/8/8/8/8/8/8/4K2R w K - 0 1 2",
                "unexpected `2` after the FEN",
            ),
            ("4k3/8/8/8/8/8/8/4K2R w K - 0 70000", "out of range"),
        ] {
            let (line, message) = parse_positions(text).unwrap_err();
            assert_eq!(line, 1, "{text}");
            assert!(
                message.contains(reason),
                "{text}: `{message}` lacks `{reason}`"
            );
        }
        // EPD operations after the four fields or after both counters.
        let boards = parse_positions(
            "4k3/8/8/8/8/8/8/4K2R w K - noop;\n4k3/8/8/8/8/8/8/4K2R w K - 3 9 c0 \"x\";\n",
        )
        .unwrap();
        assert_eq!(boards[0].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(boards[1].to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 3 9");
    }

    #[test]
    fn run_reports_every_position_and_sums_counters() {
        let boards =
            parse_positions("8/8/8/8/8/6k1/6p1/6K1 w - - 0 1\n7k/7P/6K1/8/3B4/8/8/8 b - - 0 1")
                .unwrap();
        let mut seen = Vec::new();
        let report = run(&boards, 2, 1, false, |index, result| {
            seen.push((index, result.fen.clone()))
        });
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].0, 1);
        assert_eq!(report.positions.len(), 2);
        assert_eq!(
            report.totals.nodes,
            report.positions.iter().map(|p| p.nodes).sum::<u64>()
        );
        // The second position is stalemate: there is no move to report.
        assert!(report.positions[1].bestmove.is_null());
    }

    #[test]
    fn exits_are_counted_by_the_search_that_asked() {
        use crate::tier::{SearchKind, TIERS};
        // Depth 1: the root is the only main-search node (its static eval is the one main
        // exit); every reply is searched by quiescence, whose stand-pat makes the other exits.
        let boards =
            parse_positions("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
                .unwrap();
        let totals = run(&boards, 1, 1, false, |_, _| {}).totals;
        let main = totals.search_exits(SearchKind::Main);
        let quiescence = totals.search_exits(SearchKind::Quiescence);
        assert_eq!(main.iter().sum::<u64>(), 1, "{main:?}");
        assert_eq!(
            quiescence.iter().sum::<u64>(),
            totals.eval_calls - 1,
            "{quiescence:?}"
        );
        // Stand-pat exits happen in the cheap tiers too.
        assert!(quiescence[0] + quiescence[1] > 0, "{quiescence:?}");
        for t in 0..TIERS {
            assert_eq!(main[t] + quiescence[t], totals.exits[t], "tier {t}");
            for bucket in 0..totals.exits_by_material_bucket.len() {
                assert_eq!(
                    totals.exits_by_search[SearchKind::Main as usize][bucket][t]
                        + totals.exits_by_search[SearchKind::Quiescence as usize][bucket][t],
                    totals.exits_by_material_bucket[bucket][t],
                    "tier {t} bucket {bucket}"
                );
            }
        }
    }
}
