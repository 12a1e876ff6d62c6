//! Headless chromium for the HTML report tests: a page loaded in a real browser, its DOM and
//! console read back, and screenshots for docs/. Skipped, with the reason printed, where
//! chromium is not installed (`.ci/run` installs it where it can).

use std::path::Path;
use std::process::Command;

/// The chromium binary, if one is installed.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|name| Command::new(name).arg("--version").output().is_ok())
}

fn headless(chromium: &str, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Loads the page headless and checks that the browser logged no console message (an error in
/// the page), that the DOM holds `svgs` SVG elements, and that each carries at least
/// `min_marks` drawn marks (circles, rects, paths, polylines, lines): every plot has its data.
/// Returns the DOM, or `None` where chromium is not installed.
pub fn render_headless(page: &Path, svgs: usize, min_marks: usize) -> Option<String> {
    let Some(chromium) = chromium() else {
        eprintln!("skipped the headless rendering: chromium is not installed");
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let output = headless(chromium, profile.path())
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE(") || line.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(dom.contains("</html>"), "{dom}");
    let plots: Vec<&str> = dom.split("<svg").skip(1).collect();
    assert_eq!(plots.len(), svgs, "SVG elements in the DOM");
    for (index, plot) in plots.iter().enumerate() {
        let plot = plot.split("</svg>").next().unwrap_or("");
        let marks = ["<circle", "<rect", "<path", "<polyline", "<line"]
            .iter()
            .map(|mark| plot.matches(mark).count())
            .sum::<usize>();
        assert!(
            marks >= min_marks,
            "SVG {index} has {marks} marks, fewer than {min_marks}"
        );
    }
    Some(dom)
}

/// Screenshots the page at the given window size to `png` (for docs/img), where chromium is
/// installed; returns whether it did.
pub fn screenshot(page: &Path, png: &Path, width: u32, height: u32) -> bool {
    let Some(chromium) = chromium() else {
        return false;
    };
    let profile = tempfile::tempdir().unwrap();
    let output = headless(chromium, profile.path())
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg("--hide-scrollbars")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    output.status.success() && png.exists()
}

/// Checks that a page stands alone and returns its number of `<svg` elements.
pub fn self_contained_svgs(html: &str) -> usize {
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.to_lowercase().contains("<script"), "no script");
    let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !without_xmlns.contains("http://") && !without_xmlns.contains("https://"),
        "no network reference"
    );
    html.matches("<svg").count()
}
