//! The app's stylesheet and script, inside the binary. Their URLs carry a hash of their content,
//! so browsers may keep them for a year and still never use an old one.

use sha2::{Digest, Sha256};
use warp::http::StatusCode;
use warp::reply::Response;

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("static/app.css"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("static/app.js"),
    },
];

fn version(body: &[u8]) -> String {
    Sha256::digest(body)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The URL of asset `name` (`app.css` → `/app/static/app.<hash>.css`).
pub fn href(name: &str) -> String {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => {
            let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
            format!("/app/static/{stem}.{}.{ext}", version(asset.body))
        }
        None => format!("/app/static/{name}"),
    }
}

/// The response for `/app/static/{file}`, when `file` names an asset at its current version.
pub fn serve(file: &str) -> Option<Response> {
    let asset = ASSETS
        .iter()
        .find(|a| href(a.name) == format!("/app/static/{file}"))?;
    let mut response = Response::new(asset.body.into());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static(asset.content_type),
    );
    headers.insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    Some(response)
}
