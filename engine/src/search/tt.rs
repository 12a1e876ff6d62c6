//! Transposition table: one entry per slot, sized in megabytes by the `Hash` option.

use crate::types::Move;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Bound {
    None = 0,
    /// The score is a lower bound (fail high).
    Lower = 1,
    /// The score is an upper bound (fail low).
    Upper = 2,
    Exact = 3,
}

#[derive(Clone, Copy)]
pub struct Entry {
    key: u64,
    pub mv: Move,
    pub score: i16,
    pub eval: i16,
    pub depth: i8,
    pub bound: Bound,
}

const EMPTY: Entry = Entry {
    key: 0,
    mv: Move::NULL,
    score: 0,
    eval: 0,
    depth: 0,
    bound: Bound::None,
};

pub struct TranspositionTable {
    entries: Vec<Entry>,
}

impl TranspositionTable {
    pub fn new(megabytes: usize) -> TranspositionTable {
        let count = (megabytes.max(1) * 1024 * 1024 / std::mem::size_of::<Entry>()).max(1024);
        TranspositionTable {
            entries: vec![EMPTY; count],
        }
    }

    pub fn clear(&mut self) {
        self.entries.fill(EMPTY);
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        // Multiply-high maps the key onto any table size without a modulo.
        ((key as u128 * self.entries.len() as u128) >> 64) as usize
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let entry = self.entries[self.index(key)];
        (entry.key == key && entry.bound != Bound::None).then_some(entry)
    }

    #[inline]
    pub fn store(&mut self, key: u64, mv: Move, score: i32, eval: i32, depth: i32, bound: Bound) {
        let index = self.index(key);
        let slot = &mut self.entries[index];
        // Keep a deeper result for the same position unless the new one is exact.
        if slot.key == key && bound != Bound::Exact && depth + 2 < slot.depth as i32 {
            return;
        }
        let mv = if mv.is_null() && slot.key == key {
            slot.mv
        } else {
            mv
        };
        *slot = Entry {
            key,
            mv,
            score: score as i16,
            eval: eval as i16,
            depth: depth.clamp(-1, 127) as i8,
            bound,
        };
    }
}
