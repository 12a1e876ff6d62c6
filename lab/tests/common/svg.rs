//! Flamegraph SVGs read as XML: well-formed, an `<svg>` root, and the tooltips of its frames.

use quick_xml::events::Event;
use quick_xml::Reader;

/// The text of every `<title>` (one per frame, e.g. `full_tier (12 samples, 2.50%; +0.40%)`);
/// panics unless `text` is well-formed XML with an `<svg>` root.
pub fn svg_titles(text: &str) -> Vec<String> {
    let mut reader = Reader::from_str(text);
    let mut root = None;
    let mut depth = 0usize;
    let mut in_title = false;
    let mut titles = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(element)) => {
                let name = String::from_utf8_lossy(element.name().as_ref()).into_owned();
                in_title = name == "title";
                root.get_or_insert(name);
                depth += 1;
            }
            Ok(Event::Empty(element)) => {
                root.get_or_insert(String::from_utf8_lossy(element.name().as_ref()).into_owned());
            }
            Ok(Event::End(_)) => {
                in_title = false;
                depth -= 1;
            }
            Ok(Event::Text(text)) if in_title => {
                titles.push(text.unescape().expect("a title's entities").into_owned());
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(error) => panic!(
                "not well-formed XML at byte {}: {error}",
                reader.buffer_position()
            ),
        }
    }
    assert_eq!(root.as_deref(), Some("svg"), "the root element");
    assert_eq!(depth, 0, "unclosed elements");
    titles
}
