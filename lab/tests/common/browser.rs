//! Headless chromium for the HTML report tests: a page loaded in a real browser, its DOM and
//! console read back, and screenshots for docs/. Skipped, with the reason printed, where
//! chromium is not installed (`.ci/run` installs it where it can).

use std::path::Path;
use std::process::Command;

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

/// The chromium binary, if one is installed.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
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

/// What a script measured of a page laid out in chromium.
#[derive(Debug)]
pub struct Layout {
    /// The smallest text on screen, in CSS px at 100% zoom: each SVG text's font size times
    /// its plot's scale, and each HTML element's font size where it holds text.
    pub min_text_px: f64,
    /// The text that size belongs to.
    pub smallest: String,
    /// Date cells (`td.date`) and those whose text runs over more than one line.
    pub date_cells: usize,
    pub wrapped_date_cells: Vec<String>,
    /// SVG elements wider than their figure, which scrolls them.
    pub scrolled_plots: usize,
}

/// Measures the page's text after layout in a window `width` px wide (None where chromium is
/// not installed). The pages carry no script, so the measuring script is added to a copy.
pub fn layout(page: &Path, width: u32) -> Option<Layout> {
    let chromium = chromium()?;
    const MEASURE: &str = r#"<script>
(function () {
  var min = Infinity, smallest = '';
  function consider(px, text) { if (px < min) { min = px; smallest = text; } }
  document.querySelectorAll('svg text').forEach(function (t) {
    if (!t.textContent.trim()) return;
    var m = t.getScreenCTM();
    var scale = Math.sqrt(m.a * m.a + m.b * m.b);
    consider(parseFloat(getComputedStyle(t).fontSize) * scale, t.textContent.trim());
  });
  document.querySelectorAll('body *').forEach(function (e) {
    if (e.closest('svg')) return;
    var own = Array.prototype.some.call(e.childNodes, function (n) {
      return n.nodeType === 3 && n.textContent.trim();
    });
    if (own) consider(parseFloat(getComputedStyle(e).fontSize), e.textContent.trim().slice(0, 60));
  });
  var dates = document.querySelectorAll('td.date'), wrapped = [];
  dates.forEach(function (td) {
    var range = document.createRange();
    range.selectNodeContents(td);
    var tops = {};
    Array.prototype.forEach.call(range.getClientRects(), function (r) { tops[Math.round(r.top)] = 1; });
    if (Object.keys(tops).length > 1) wrapped.push(td.textContent);
  });
  var scrolled = 0;
  document.querySelectorAll('figure').forEach(function (f) {
    if (f.scrollWidth > f.clientWidth + 1) scrolled++;
  });
  var out = document.createElement('pre');
  out.id = 'layout';
  out.textContent = JSON.stringify({min: min, smallest: smallest, dates: dates.length,
    wrapped: wrapped, scrolled: scrolled});
  document.body.appendChild(out);
})();
</script>"#;
    let html = std::fs::read_to_string(page).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("measured.html");
    std::fs::write(&copy, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let output = headless(chromium, profile.path())
        .arg(format!("--window-size={width},900"))
        .arg("--dump-dom")
        .arg(format!("file://{}", copy.display()))
        .output()
        .expect("chromium runs");
    assert!(output.status.success(), "{output:?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let json = dom
        .split("<pre id=\"layout\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the script reported nothing: {dom}"))
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    Some(Layout {
        min_text_px: value["min"].as_f64().unwrap_or(f64::INFINITY),
        smallest: value["smallest"].as_str().unwrap_or("").to_string(),
        date_cells: value["dates"].as_u64().unwrap() as usize,
        wrapped_date_cells: value["wrapped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cell| cell.as_str().unwrap_or("").to_string())
            .collect(),
        scrolled_plots: value["scrolled"].as_u64().unwrap() as usize,
    })
}

/// Checks the page's text is at least 12 px at 100% zoom in a laptop's window (1366 px, where
/// no plot needs to scroll) and a narrow one (800 px, where plots scroll rather than shrink),
/// and that no date cell wraps.
/// Returns the date cells found, or `None` where chromium is not installed.
pub fn assert_readable_layout(page: &Path) -> Option<usize> {
    let mut dates = 0;
    for width in [1366, 800] {
        let layout = layout(page, width)?;
        assert!(
            layout.min_text_px >= 12.0 - 1e-6,
            "at {width} px: a text of {:.2} px ({:?})",
            layout.min_text_px,
            layout.smallest
        );
        assert!(
            layout.wrapped_date_cells.is_empty(),
            "at {width} px: wrapped date cells {:?}",
            layout.wrapped_date_cells
        );
        if width == 1366 {
            assert_eq!(layout.scrolled_plots, 0, "at {width} px: {layout:?}");
        }
        dates = layout.date_cells;
    }
    Some(dates)
}
