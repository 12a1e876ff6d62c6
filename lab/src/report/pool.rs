//! What `lab pool generate` says about the file it wrote.

use super::table::Table;
use crate::pool::{BookWritten, PoolWritten};

pub(crate) fn pool_written(pool: &PoolWritten) -> String {
    let mut report = format!(
        "wrote {} positions to {} in {:.1} s\n",
        pool.positions,
        pool.path.display(),
        pool.seconds
    );
    let table = Table::new(["material bucket", "quiet", "tactical", "total"]).with_rows(
        pool.strata.iter().enumerate().map(|(bucket, c)| {
            [
                bucket.to_string(),
                c[0].to_string(),
                c[1].to_string(),
                (c[0] + c[1]).to_string(),
            ]
        }),
    );
    report.push_str(&format!("{}\n", table.terminal()));
    if pool.positions < pool.requested {
        report.push_str(&format!(
            "note: only {} distinct positions could be drawn; some strata are short\n",
            pool.positions
        ));
    }
    report
}

pub(crate) fn book_written(book: &BookWritten) -> String {
    format!(
        "wrote {} openings to {} in {:.1} s ({} drawn)\n",
        book.openings,
        book.path.display(),
        book.seconds,
        book.tried
    )
}
