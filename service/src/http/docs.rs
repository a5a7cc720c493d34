//! The published API description (`GET /v1/openapi.json`) and plain-text guide (`GET /v1/guide.txt`).
//! Both are public documentation: they need no key and are not rate limited.

use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

/// The OpenAPI 3.1 description of every v1 route, as published in `schemas/openapi.json`.
pub const OPENAPI: &str = include_str!("../../../schemas/openapi.json");
/// The plain-text guide.
pub const GUIDE: &str = include_str!("guide.txt");

fn document(route: &'static str, content_type: &'static str, body: &'static str) -> Response {
    let mut response = Response::new(body.into());
    response
        .extensions_mut()
        .insert(crate::telemetry::Route(route));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static(content_type),
    );
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    if let Ok(value) = warp::http::HeaderValue::from_str(&id) {
        headers.insert("x-request-id", value);
    }
    response
}

/// The documentation routes.
pub fn routes() -> BoxedFilter<(Response,)> {
    let openapi = warp::path!("v1" / "openapi.json")
        .and(warp::get())
        .map(|| document("/v1/openapi.json", "application/json", OPENAPI));
    let guide = warp::path!("v1" / "guide.txt")
        .and(warp::get())
        .map(|| document("/v1/guide.txt", "text/plain; charset=utf-8", GUIDE));
    openapi.or(guide).unify().boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_of_the_published_routes_has_its_own_label() {
        let document: serde_json::Value = serde_json::from_str(OPENAPI).expect("JSON");
        let paths = document["paths"].as_object().expect("paths");
        for (path, operations) in paths {
            let operations = operations.as_object().expect("operations");
            let methods = [
                "get", "put", "post", "delete", "options", "head", "patch", "trace",
            ]
            .into_iter()
            .filter(|m| operations.contains_key(*m));
            for method in methods {
                let method = method.to_ascii_uppercase();
                assert!(
                    crate::telemetry::METHODS.contains(&method.as_str()),
                    "{method} {path} is served but would be labelled other"
                );
            }
        }
    }
}
