//! The methods each path accepts, for the `Allow` header that every 405 carries (RFC 9110,
//! section 15.5.6). They are read from the published OpenAPI document, the one description of
//! the routes, so the header and the document cannot disagree.

use std::sync::LazyLock;

/// One path template of the document: its segments (`None` for a `{parameter}`) and methods.
struct Template {
    segments: Vec<Option<String>>,
    methods: Vec<String>,
}

static TEMPLATES: LazyLock<Vec<Template>> = LazyLock::new(|| templates(super::docs::OPENAPI));

fn templates(openapi: &str) -> Vec<Template> {
    let Ok(document) = serde_json::from_str::<serde_json::Value>(openapi) else {
        return Vec::new();
    };
    let Some(paths) = document["paths"].as_object() else {
        return Vec::new();
    };
    paths
        .iter()
        .map(|(path, operations)| Template {
            segments: path
                .trim_start_matches('/')
                .split('/')
                .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                .collect(),
            methods: operations
                .as_object()
                .map(|ops| {
                    ["get", "post", "put", "patch", "delete"]
                        .iter()
                        .filter(|m| ops.contains_key(**m))
                        .map(|m| m.to_ascii_uppercase())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// The methods `path` accepts, as the value of an `Allow` header (`GET, POST`), or `None` when
/// no route has this path. Where a literal path and a template both match (`/sessions/
/// from-builder` and `/sessions/{id}`), the literal one is the route.
pub fn allowed(path: &str) -> Option<String> {
    allowed_in(&TEMPLATES, path)
}

fn allowed_in(templates: &[Template], path: &str) -> Option<String> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut best: Option<(usize, Vec<&str>)> = None;
    for template in templates {
        if template.segments.len() != segments.len() {
            continue;
        }
        let fits = template
            .segments
            .iter()
            .zip(&segments)
            .all(|(t, s)| t.as_deref().map_or(!s.is_empty(), |literal| literal == *s));
        if !fits {
            continue;
        }
        let literals = template.segments.iter().filter(|s| s.is_some()).count();
        match &mut best {
            Some((score, methods)) if *score == literals => {
                methods.extend(template.methods.iter().map(String::as_str));
            }
            Some((score, _)) if *score > literals => {}
            _ => {
                best = Some((
                    literals,
                    template.methods.iter().map(String::as_str).collect(),
                ))
            }
        }
    }
    let (_, mut methods) = best?;
    let order = ["GET", "POST", "PUT", "PATCH", "DELETE"];
    methods.sort_by_key(|m| order.iter().position(|o| o == m));
    methods.dedup();
    Some(methods.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = r#"{"paths": {
        "/v1/papers": {"get": {}, "post": {}},
        "/v1/papers/{id}": {"get": {}, "patch": {}, "parameters": []},
        "/v1/marking/sessions/{id}": {"get": {}},
        "/v1/marking/sessions/from-builder": {"post": {}}
    }}"#;

    #[test]
    fn methods_come_from_the_document() {
        let t = templates(DOCUMENT);
        assert_eq!(allowed_in(&t, "/v1/papers").as_deref(), Some("GET, POST"));
        assert_eq!(
            allowed_in(&t, "/v1/papers/abc").as_deref(),
            Some("GET, PATCH")
        );
        assert_eq!(
            allowed_in(&t, "/v1/marking/sessions/from-builder").as_deref(),
            Some("POST")
        );
        assert_eq!(
            allowed_in(&t, "/v1/marking/sessions/abc").as_deref(),
            Some("GET")
        );
        assert_eq!(allowed_in(&t, "/v1/papers/a/b"), None);
        assert_eq!(allowed_in(&t, "/v1/papers/"), None);
    }

    #[test]
    fn the_published_document_is_read() {
        assert_eq!(allowed("/v1/me").as_deref(), Some("GET"));
        assert!(allowed("/v1/papers/x").is_some_and(|m| m.contains("PATCH")));
    }
}
