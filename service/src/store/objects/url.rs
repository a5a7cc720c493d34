//! Where stored files live, as given to `--asset-store`: in the database (the default), under
//! a local directory, or under a prefix of an S3-compatible bucket.

/// Where stored files live, as given to `--asset-store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetStoreUrl {
    /// In the database, beside the rows that name them (the default).
    Database,
    /// Files under a local directory (one machine).
    File(std::path::PathBuf),
    /// Objects under a prefix of an S3-compatible bucket (endpoint, region and credentials from
    /// the usual `AWS_*` variables).
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without leading or trailing slashes (may be empty).
        prefix: String,
    },
}

impl AssetStoreUrl {
    /// Reads `database`, `file:///absolute/directory` or `s3://bucket[/prefix]`.
    pub fn parse(text: &str) -> Result<AssetStoreUrl, String> {
        let text = text.trim();
        if text == "database" {
            return Ok(AssetStoreUrl::Database);
        }
        if let Some(path) = text.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(format!(
                    "a file store needs an absolute directory, as in file:///var/lib/examkit/assets, not {text:?}"
                ));
            }
            let path = path.trim_end_matches('/');
            if path.is_empty() {
                return Err("a file store cannot be the root directory".into());
            }
            return Ok(AssetStoreUrl::File(std::path::PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if !valid_bucket(bucket) {
                return Err(format!(
                    "{bucket:?} is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)"
                ));
            }
            let prefix = prefix.trim_matches('/');
            if prefix
                .split('/')
                .any(|part| part == "." || part == ".." || (part.is_empty() && !prefix.is_empty()))
                || prefix.chars().any(|c| c.is_control() || c == '\\')
            {
                return Err(format!("{prefix:?} is not a usable key prefix"));
            }
            return Ok(AssetStoreUrl::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.to_owned(),
            });
        }
        Err(format!(
            "the asset store must be database, file:///directory or s3://bucket/prefix, not {text:?}"
        ))
    }
}

impl std::fmt::Display for AssetStoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssetStoreUrl::Database => f.write_str("database"),
            AssetStoreUrl::File(path) => write!(f, "file://{}", path.display()),
            AssetStoreUrl::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            AssetStoreUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

fn valid_bucket(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && name
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        && name
            .as_bytes()
            .last()
            .is_some_and(u8::is_ascii_alphanumeric)
}
