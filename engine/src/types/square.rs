use super::Bitboard;
use std::fmt;

/// A board square, 0 = a1 … 63 = h8.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square(u8);

pub type File = u8;
pub type Rank = u8;

impl Square {
    #[inline(always)]
    pub const fn new(index: u8) -> Square {
        debug_assert!(index < 64);
        Square(index)
    }

    #[inline(always)]
    pub const fn from_file_rank(file: File, rank: Rank) -> Square {
        Square(rank * 8 + file)
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline(always)]
    pub const fn file(self) -> File {
        self.0 & 7
    }

    #[inline(always)]
    pub const fn rank(self) -> Rank {
        self.0 >> 3
    }

    /// The same square seen from the other side of the board (a1 <-> a8).
    #[inline(always)]
    pub const fn flip(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// The rank counted from `white`'s side (rank 1 for white is rank 8 for black).
    #[inline(always)]
    pub const fn relative_rank(self, white: bool) -> Rank {
        if white {
            self.rank()
        } else {
            7 - self.rank()
        }
    }

    /// Chebyshev ring around the four centre squares: 0 on d4/e4/d5/e5, 3 on the edge.
    #[inline(always)]
    pub const fn center_ring(self) -> usize {
        let f = self.file() as i32;
        let r = self.rank() as i32;
        let df = if f < 4 { 3 - f } else { f - 4 };
        let dr = if r < 4 { 3 - r } else { r - 4 };
        (if df > dr { df } else { dr }) as usize
    }

    /// King-move (Chebyshev) distance.
    #[inline(always)]
    pub const fn distance(self, other: Square) -> i32 {
        let files = (self.file() as i32 - other.file() as i32).abs();
        let ranks = (self.rank() as i32 - other.rank() as i32).abs();
        if files > ranks {
            files
        } else {
            ranks
        }
    }

    #[inline(always)]
    pub const fn bb(self) -> Bitboard {
        Bitboard::from_square(self)
    }

    /// Offsets the square by `delta` indices; the caller guarantees the result is on the board.
    #[inline(always)]
    pub const fn offset(self, delta: i8) -> Square {
        Square((self.0 as i8 + delta) as u8)
    }

    pub fn parse(text: &str) -> Option<Square> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        let (file, rank) = (bytes[0].wrapping_sub(b'a'), bytes[1].wrapping_sub(b'1'));
        (file < 8 && rank < 8).then(|| Square::from_file_rank(file, rank))
    }

    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}
