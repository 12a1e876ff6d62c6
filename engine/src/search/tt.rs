//! Transposition table: one entry per slot, sized in megabytes by the `Hash` option.
//!
//! Clearing bumps a generation number instead of wiping memory: an entry of an older
//! generation reads exactly like an empty one. The bench clears before every position, and a
//! 16 MB wipe per position would cost more instructions than a shallow bench itself.

use crate::huge_table::HugeTable;
use crate::types::Move;

/// A stored inexact result for the same position is kept when it searched this many plies or
/// more deeper than the new one.
const KEEP_DEEPER_BY: i32 = 2;

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
    pub depth: i8,
    pub bound: Bound,
    generation: u8,
}

const EMPTY: Entry = Entry {
    key: 0,
    mv: Move::NULL,
    score: 0,
    depth: 0,
    bound: Bound::None,
    generation: 0,
};

// Four entries per cache line.
const _: () = assert!(std::mem::size_of::<Entry>() == 16);

pub struct TranspositionTable {
    entries: HugeTable<Entry>,
    /// Entries of other generations are empty. Never 0, the generation of `EMPTY`.
    generation: u8,
}

impl TranspositionTable {
    pub fn new(megabytes: usize) -> TranspositionTable {
        let count = (megabytes.max(1) * 1024 * 1024 / std::mem::size_of::<Entry>()).max(1024);
        TranspositionTable {
            entries: HugeTable::new(count, EMPTY),
            generation: 1,
        }
    }

    pub fn clear(&mut self) {
        if self.generation == u8::MAX {
            self.entries.fill(EMPTY);
            self.generation = 1;
        } else {
            self.generation += 1;
        }
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        // Multiply-high maps the key onto any table size without a modulo.
        ((key as u128 * self.entries.len() as u128) >> 64) as usize
    }

    /// Starts loading `key`'s slot into the cache, well before the child node probes it: the
    /// TT move's slot during the static evaluation, later moves' one move ahead.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch::prefetch(&self.entries[self.index(key)]);
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let entry = self.entries[self.index(key)];
        let live = entry.generation == self.generation;
        (live && entry.key == key && entry.bound != Bound::None).then_some(entry)
    }

    #[inline]
    pub fn store(&mut self, key: u64, mv: Move, score: i32, depth: i32, bound: Bound) {
        let index = self.index(key);
        let generation = self.generation;
        let slot = &mut self.entries[index];
        let same_position = slot.generation == generation && slot.key == key;
        // Keep a deeper result for the same position unless the new one is exact.
        if same_position && bound != Bound::Exact && depth + KEEP_DEEPER_BY < slot.depth as i32 {
            return;
        }
        let mv = if mv.is_null() && same_position {
            slot.mv
        } else {
            mv
        };
        *slot = Entry {
            key,
            mv,
            score: score as i16,
            depth: depth.clamp(-1, 127) as i8,
            bound,
            generation,
        };
    }
}
