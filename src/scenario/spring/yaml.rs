//! application.yml: YAML documents flattened into the property names Spring sees.
//!
//! Spring Boot loads each YAML document as one property source, flattened the way
//! `YamlProcessor#buildFlattenedMap` does: nested mapping keys joined with `.`, a key written
//! in brackets (`"[a.b]"`) appended as is, sequence items as `name[i]`, a null as the empty
//! string. Aliases are expanded and `<<` merge keys (YAML 1.1, which SnakeYAML, Boot's parser,
//! supports) copy the merged mapping's entries under the key's parent, keys written beside
//! them winning. The parser is saphyr-parser (a YAML 1.2 event parser with a span on every
//! event); scalars are kept as their text, so YAML 1.1's `on`/`yes` reach the converters as
//! written, where Spring's `StringToBooleanConverter` reads them as booleans anyway.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, Span};

use super::{Document, Property, SpringProblem};

/// Most entries one file may flatten to: an alias of an alias of ... (a "billion laughs"
/// document) is refused here instead of exhausting memory.
const MAX_ENTRIES: usize = 100_000;
/// Deepest nesting of mappings and sequences accepted.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone)]
enum Node {
    Scalar(String, Span),
    Map(Vec<(String, Span, Node)>, Span),
    Seq(Vec<Node>, Span),
}

/// The documents of `text`, each flattened, in file order.
pub(super) fn documents(text: &str) -> Result<Vec<Document>, SpringProblem> {
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder::default();
    let mut docs = Vec::new();
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| SpringProblem {
            file: String::new(),
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: format!("invalid YAML: {}", e.info()),
        })?;
        if let Some(root) = builder.on_event(event, span)? {
            let mut properties = Vec::new();
            let mut budget = MAX_ENTRIES;
            flatten("", &root, None, &mut properties, &mut budget)?;
            docs.push(Document {
                properties,
                hash_tokens: Vec::new(),
            });
        }
    }
    Ok(docs)
}

/// Builds one document's tree from the events, with its anchors.
#[derive(Default)]
struct Builder {
    /// Open collections: a mapping's entries (and the key waiting for its value), a sequence.
    stack: Vec<Open>,
    anchors: HashMap<usize, Node>,
    /// Nodes materialised so far (aliases count again), against [`MAX_ENTRIES`].
    nodes: usize,
}

enum Open {
    Map {
        entries: Vec<(String, Span, Node)>,
        key: Option<(String, Span)>,
        anchor: usize,
        span: Span,
    },
    Seq {
        items: Vec<Node>,
        anchor: usize,
        span: Span,
    },
}

impl Builder {
    /// Feeds one event; returns a document's root when it is complete.
    fn on_event(&mut self, event: Event<'_>, span: Span) -> Result<Option<Node>, SpringProblem> {
        let problem = |message: String| SpringProblem {
            file: String::new(),
            line: span.start.line(),
            column: span.start.col() + 1,
            message,
        };
        let node = match event {
            Event::DocumentStart(_) => {
                self.anchors.clear();
                return Ok(None);
            }
            Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(problem(format!("nested deeper than {MAX_DEPTH} levels")));
                }
                self.stack.push(Open::Map {
                    entries: Vec::new(),
                    key: None,
                    anchor,
                    span,
                });
                return Ok(None);
            }
            Event::SequenceStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(problem(format!("nested deeper than {MAX_DEPTH} levels")));
                }
                self.stack.push(Open::Seq {
                    items: Vec::new(),
                    anchor,
                    span,
                });
                return Ok(None);
            }
            Event::MappingEnd => match self.stack.pop() {
                Some(Open::Map {
                    entries,
                    anchor,
                    span,
                    ..
                }) => self.anchored(anchor, Node::Map(entries, span)),
                _ => return Err(problem("unbalanced mapping".to_string())),
            },
            Event::SequenceEnd => match self.stack.pop() {
                Some(Open::Seq {
                    items,
                    anchor,
                    span,
                }) => self.anchored(anchor, Node::Seq(items, span)),
                _ => return Err(problem("unbalanced sequence".to_string())),
            },
            Event::Scalar(text, style, anchor, _) => {
                let plain_null = style == saphyr_parser::ScalarStyle::Plain
                    && matches!(text.as_ref(), "~" | "null" | "Null" | "NULL" | "");
                let text = if plain_null {
                    String::new()
                } else {
                    text.into_owned()
                };
                self.anchored(anchor, Node::Scalar(text, span))
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some(node) => {
                    self.nodes += size(node);
                    if self.nodes > MAX_ENTRIES {
                        return Err(problem(format!(
                            "aliases expand to more than {MAX_ENTRIES} nodes"
                        )));
                    }
                    node.clone()
                }
                None => return Err(problem("an alias of an unknown anchor".to_string())),
            },
            _ => return Ok(None),
        };
        self.nodes += 1;
        if self.nodes > MAX_ENTRIES {
            return Err(problem(format!("more than {MAX_ENTRIES} nodes")));
        }
        match self.stack.last_mut() {
            None => Ok(Some(node)),
            Some(Open::Seq { items, .. }) => {
                items.push(node);
                Ok(None)
            }
            Some(Open::Map { entries, key, .. }) => match key.take() {
                None => match node {
                    Node::Scalar(text, span) => {
                        *key = Some((text, span));
                        Ok(None)
                    }
                    _ => Err(problem(
                        "a mapping or sequence as a key (Spring keys are text)".to_string(),
                    )),
                },
                Some((k, k_span)) => {
                    entries.push((k, k_span, node));
                    Ok(None)
                }
            },
        }
    }

    fn anchored(&mut self, anchor: usize, node: Node) -> Node {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        node
    }
}

fn size(node: &Node) -> usize {
    match node {
        Node::Scalar(..) => 1,
        Node::Map(entries, _) => 1 + entries.iter().map(|(_, _, n)| size(n)).sum::<usize>(),
        Node::Seq(items, _) => 1 + items.iter().map(size).sum::<usize>(),
    }
}

/// `YamlProcessor#buildFlattenedMap`: `prefix` + each leaf's path. A leaf is placed at its
/// key (`key`, the nearest mapping key above it), or at itself in a sequence.
fn flatten(
    prefix: &str,
    node: &Node,
    key: Option<&Span>,
    out: &mut Vec<Property>,
    budget: &mut usize,
) -> Result<(), SpringProblem> {
    let mut push = |name: String, value: String, span: &Span| {
        let span = key.unwrap_or(span);
        if *budget == 0 {
            return Err(SpringProblem {
                file: String::new(),
                line: span.start.line(),
                column: span.start.col() + 1,
                message: format!("more than {MAX_ENTRIES} properties"),
            });
        }
        *budget -= 1;
        out.push(Property {
            file: String::new(),
            refusal: None,
            name,
            value,
            line: span.start.line(),
            column: span.start.col() + 1,
        });
        Ok(())
    };
    match node {
        Node::Scalar(text, span) => {
            if !prefix.is_empty() {
                push(prefix.to_string(), text.clone(), span)?;
            }
            Ok(())
        }
        Node::Seq(items, span) => {
            if items.is_empty() && !prefix.is_empty() {
                return push(prefix.to_string(), String::new(), span);
            }
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), item, None, out, budget)?;
            }
            Ok(())
        }
        Node::Map(entries, span) => {
            if entries.is_empty() && !prefix.is_empty() {
                return push(prefix.to_string(), String::new(), span);
            }
            // `<<: *base` (or a list of them): the merged mappings first, so the keys written
            // beside the merge key, flattened after them, win.
            for (name, at, value) in entries.iter().filter(|(k, _, _)| k == "<<") {
                let merged: Vec<&Node> = match value {
                    Node::Seq(items, _) => items.iter().collect(),
                    other => vec![other],
                };
                for node in merged {
                    if let Node::Map(..) = node {
                        flatten(prefix, node, None, out, budget)?;
                    } else {
                        flatten(&join(prefix, name), node, Some(at), out, budget)?;
                    }
                }
            }
            for (name, at, value) in entries.iter().filter(|(k, _, _)| k != "<<") {
                flatten(&join(prefix, name), value, Some(at), out, budget)?;
            }
            Ok(())
        }
    }
}

/// A child's path: `[bracketed]` keys are appended as written, others after a `.`.
fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else if key.starts_with('[') {
        format!("{prefix}{key}")
    } else {
        format!("{prefix}.{key}")
    }
}
