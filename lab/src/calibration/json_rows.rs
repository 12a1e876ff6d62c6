//! The calibration file's JSON layout: serde_json's pretty form with arrays of scalars on one
//! line.

use anyhow::Result;
use serde::Serialize;

/// Pretty JSON with every array of scalars on one line: a calibration file holds arrays of
/// samples and histogram bins by the hundred thousand, one line each instead of ten.
pub(crate) fn to_json_text(value: &impl Serialize) -> Result<String> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        RowsFormatter::default(),
    ))?;
    out.push(b'\n');
    Ok(String::from_utf8(out)?)
}

/// serde_json's pretty layout, except that an array whose first item is a scalar stays on one
/// line (the files' arrays hold items of one kind).
#[derive(Default)]
struct RowsFormatter {
    /// Open containers, innermost last: `Some(true)` an array on one line, `Some(false)` a
    /// container over lines, `None` an array whose first item has not come yet.
    open: Vec<Option<bool>>,
}

impl RowsFormatter {
    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W, depth: usize) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Before any value: the first item of an array decides its layout.
    fn value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        container: bool,
    ) -> std::io::Result<()> {
        let depth = self.open.len();
        if let Some(layout @ None) = self.open.last_mut() {
            *layout = Some(!container);
            if container {
                self.newline(w, depth)?;
            }
        }
        Ok(())
    }

    fn end<W: ?Sized + std::io::Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        if self.open.pop() == Some(Some(false)) {
            self.newline(w, self.open.len())?;
        }
        w.write_all(close)
    }
}

macro_rules! scalars {
    ($($method:ident($type:ty)),*) => {$(
        fn $method<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: $type) -> std::io::Result<()> {
            self.value(w, false)?;
            serde_json::ser::CompactFormatter.$method(w, v)
        }
    )*};
}

impl serde_json::ser::Formatter for RowsFormatter {
    scalars!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str)
    );

    fn write_null<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.value(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.value(w, false)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.value(w, true)?;
        self.open.push(None);
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        match self.open.last() {
            Some(Some(true)) => w.write_all(b", "),
            Some(Some(false)) => {
                w.write_all(b",")?;
                self.newline(w, self.open.len())
            }
            _ => {
                debug_assert!(first);
                Ok(())
            }
        }
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.value(w, true)?;
        self.open.push(Some(true));
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if let Some(layout) = self.open.last_mut() {
            // An object with keys spreads over lines; an empty one stays `{}`.
            *layout = Some(false);
        }
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w, self.open.len())
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}
