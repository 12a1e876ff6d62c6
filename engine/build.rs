//! Generates the attack tables at compile time: leaper attacks, between/line masks and fancy
//! magic bitboards for sliders. Magic numbers are searched with a fixed-seed generator, so the
//! output is identical on every build.

use std::fmt::Write as _;
use std::{env, fs, path::Path};

const ROOK_DIRS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn on_board(file: i8, rank: i8) -> bool {
    (0..8).contains(&file) && (0..8).contains(&rank)
}

fn bit(file: i8, rank: i8) -> u64 {
    1u64 << (rank * 8 + file)
}

fn leaper(sq: usize, deltas: &[(i8, i8)]) -> u64 {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    deltas
        .iter()
        .filter(|(df, dr)| on_board(f + df, r + dr))
        .fold(0, |acc, (df, dr)| acc | bit(f + df, r + dr))
}

fn slider(sq: usize, occupied: u64, dirs: &[(i8, i8)]) -> u64 {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut attacks = 0;
    for &(df, dr) in dirs {
        let (mut cf, mut cr) = (f + df, r + dr);
        while on_board(cf, cr) {
            attacks |= bit(cf, cr);
            if occupied & bit(cf, cr) != 0 {
                break;
            }
            cf += df;
            cr += dr;
        }
    }
    attacks
}

/// Relevant-occupancy mask: the slider's empty-board rays without their last square.
fn relevant_mask(sq: usize, dirs: &[(i8, i8)]) -> u64 {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut mask = 0;
    for &(df, dr) in dirs {
        let (mut cf, mut cr) = (f + df, r + dr);
        while on_board(cf + df, cr + dr) {
            mask |= bit(cf, cr);
            cf += df;
            cr += dr;
        }
    }
    mask
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

struct MagicEntry {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

fn find_magics(dirs: &[(i8, i8)], rng: &mut Rng, table: &mut Vec<u64>) -> Vec<MagicEntry> {
    let mut entries = Vec::with_capacity(64);
    for sq in 0..64 {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let size = 1usize << bits;
        let mut occupancies = Vec::with_capacity(size);
        let mut subset = 0u64;
        loop {
            occupancies.push((subset, slider(sq, subset, dirs)));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let shift = 64 - bits;
        let mut slots = vec![0u64; size];
        let mut used = vec![0u32; size];
        let mut attempt = 0u32;
        let magic = loop {
            attempt += 1;
            let candidate = rng.sparse();
            if (mask.wrapping_mul(candidate) >> 56).count_ones() < 6 {
                continue;
            }
            let ok = occupancies.iter().all(|&(occ, att)| {
                let idx = (occ.wrapping_mul(candidate) >> shift) as usize;
                if used[idx] != attempt {
                    used[idx] = attempt;
                    slots[idx] = att;
                    true
                } else {
                    slots[idx] == att
                }
            });
            if ok {
                break candidate;
            }
        };
        let offset = table.len();
        table.resize(offset + size, 0);
        for &(occ, att) in &occupancies {
            table[offset + (occ.wrapping_mul(magic) >> shift) as usize] = att;
        }
        entries.push(MagicEntry {
            mask,
            magic,
            shift,
            offset,
        });
    }
    entries
}

fn write_array(out: &mut String, name: &str, ty: &str, values: impl Iterator<Item = u64>) {
    let values: Vec<u64> = values.collect();
    writeln!(out, "static {name}: [{ty}; {}] = [", values.len()).unwrap();
    for chunk in values.chunks(8) {
        let line: Vec<String> = chunk.iter().map(|v| format!("{v:#x}")).collect();
        writeln!(out, "    {},", line.join(", ")).unwrap();
    }
    writeln!(out, "];").unwrap();
}

fn write_magics(out: &mut String, name: &str, entries: &[MagicEntry]) {
    writeln!(out, "static {name}: [Magic; 64] = [").unwrap();
    for e in entries {
        writeln!(
            out,
            "    Magic {{ mask: {:#x}, magic: {:#x}, shift: {}, offset: {} }},",
            e.mask, e.magic, e.shift, e.offset
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let knight: Vec<(i8, i8)> = vec![
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ];
    let king: Vec<(i8, i8)> = vec![
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
        (0, -1),
        (1, -1),
    ];

    let mut out = String::new();
    out.push_str("// @generated by engine/build.rs: attack tables. Do not edit.\n");
    write_array(
        &mut out,
        "KNIGHT_ATTACKS",
        "u64",
        (0..64).map(|s| leaper(s, &knight)),
    );
    write_array(
        &mut out,
        "KING_ATTACKS",
        "u64",
        (0..64).map(|s| leaper(s, &king)),
    );
    write_array(
        &mut out,
        "WHITE_PAWN_ATTACKS",
        "u64",
        (0..64).map(|s| leaper(s, &[(-1, 1), (1, 1)])),
    );
    write_array(
        &mut out,
        "BLACK_PAWN_ATTACKS",
        "u64",
        (0..64).map(|s| leaper(s, &[(-1, -1), (1, -1)])),
    );

    // between[a][b]: squares strictly between a and b on a shared line, plus b itself
    // (so "block or capture the checker" is one mask); line[a][b]: the full line through both.
    let mut between = Vec::with_capacity(64 * 64);
    let mut line = Vec::with_capacity(64 * 64);
    for a in 0..64 {
        for b in 0..64 {
            let (mut bt, mut ln) = (0u64, 0u64);
            if a != b {
                for dirs in [&ROOK_DIRS[..], &BISHOP_DIRS[..]] {
                    if slider(a, 0, dirs) & (1 << b) != 0 {
                        let occ = (1u64 << a) | (1u64 << b);
                        bt = (slider(a, occ, dirs) & slider(b, occ, dirs)) | (1u64 << b);
                        ln = (slider(a, 0, dirs) & slider(b, 0, dirs)) | (1u64 << a) | (1u64 << b);
                    }
                }
            }
            between.push(bt);
            line.push(ln);
        }
    }
    write_array(&mut out, "BETWEEN", "u64", between.into_iter());
    write_array(&mut out, "LINE", "u64", line.into_iter());
    write_array(
        &mut out,
        "ROOK_RAYS",
        "u64",
        (0..64).map(|s| slider(s, 0, &ROOK_DIRS)),
    );
    write_array(
        &mut out,
        "BISHOP_RAYS",
        "u64",
        (0..64).map(|s| slider(s, 0, &BISHOP_DIRS)),
    );

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut table = Vec::new();
    let rook = find_magics(&ROOK_DIRS, &mut rng, &mut table);
    let bishop = find_magics(&BISHOP_DIRS, &mut rng, &mut table);
    write_magics(&mut out, "ROOK_MAGICS", &rook);
    write_magics(&mut out, "BISHOP_MAGICS", &bishop);
    write_array(&mut out, "SLIDER_ATTACKS", "u64", table.into_iter());

    let dest = Path::new(&env::var("OUT_DIR").unwrap()).join("tables.rs");
    fs::write(dest, out).unwrap();
}
