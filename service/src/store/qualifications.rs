//! A marker's qualification: the calibrations saved with `examkit marker calibrate --save` (kept
//! as history, the latest of a marker and model counting), and the seeded reference questions the
//! live marker marked since (`--marker-seed-every`), which can spend a qualification.
//!
//! A marker is named as calibration names it: `builtin`, `external` or `openai`, with the model
//! for `openai` (`None` for the others).

use sqlx::FromRow;

use super::words::StoredFlag;
use super::{Durability, Store, StoreError, now_ms};

/// A calibration to save.
#[derive(Debug, Clone, PartialEq)]
pub struct NewQualification {
    /// `builtin`, `external` or `openai`.
    pub marker: String,
    /// The model, for markers that name one.
    pub model: Option<String>,
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria on which the marker agreed with the trusted decisions.
    pub agreed: i64,
    /// Cohen's kappa; `None` where it is undefined.
    pub kappa: Option<f64>,
    /// Awards the trusted decisions do not make.
    pub false_awards: i64,
    /// Awards citing a clean, blank or mark-scheme page.
    pub non_work_page_awards: i64,
    /// Scripts in the reference set.
    pub scripts: i64,
    /// `sha256:` and the hex digest of the reference set's files.
    pub reference_digest: String,
    /// The bar the calibration was run against (`--min-agreement`).
    pub min_agreement: f64,
    /// Whether it met that bar.
    pub passed: bool,
}

/// A saved calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Qualification {
    /// Its id.
    pub id: String,
    /// What was saved.
    pub saved: NewQualification,
    /// The agreement, `agreed / criteria` (0 with no criterion).
    pub agreement: f64,
    /// When it was saved, Unix milliseconds.
    pub created_at: i64,
}

/// A seeded reference question the live marker marked, compared with its trusted decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSeed {
    /// The qualification in force when it was marked.
    pub qualification_id: String,
    /// `<script>/<label>` of the reference set.
    pub seed: String,
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria on which the marker agreed.
    pub agreed: i64,
    /// Awards the trusted decisions do not make.
    pub false_awards: i64,
    /// Whether the marker failed to mark it (its criteria count as not awarded).
    pub failed: bool,
    /// Whether the seeds had drifted below the bar once it was counted.
    pub drifted: bool,
}

/// A saved seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// What was saved.
    pub saved: NewSeed,
    /// When, Unix milliseconds.
    pub created_at: i64,
}

const QUALIFICATION_COLUMNS: &str = "id, marker, model, criteria, agreed, kappa, false_awards, \
     non_work_page_awards, scripts, reference_digest, min_agreement, passed, created_at";

/// A `marker_qualifications` row as stored: `passed` is 0 or 1.
#[derive(Debug, Clone, FromRow)]
struct QualificationRow {
    id: String,
    marker: String,
    model: Option<String>,
    criteria: i64,
    agreed: i64,
    kappa: Option<f64>,
    false_awards: i64,
    non_work_page_awards: i64,
    scripts: i64,
    reference_digest: String,
    min_agreement: f64,
    #[sqlx(try_from = "StoredFlag")]
    passed: bool,
    created_at: i64,
}

impl From<QualificationRow> for Qualification {
    fn from(row: QualificationRow) -> Self {
        Qualification {
            id: row.id,
            agreement: agreement(row.criteria, row.agreed),
            created_at: row.created_at,
            saved: NewQualification {
                marker: row.marker,
                model: row.model,
                criteria: row.criteria,
                agreed: row.agreed,
                kappa: row.kappa,
                false_awards: row.false_awards,
                non_work_page_awards: row.non_work_page_awards,
                scripts: row.scripts,
                reference_digest: row.reference_digest,
                min_agreement: row.min_agreement,
                passed: row.passed,
            },
        }
    }
}

/// A `marker_seeds` row as stored: `failed` and `drifted` are 0 or 1.
#[derive(Debug, Clone, FromRow)]
struct SeedRow {
    qualification_id: String,
    seed: String,
    criteria: i64,
    agreed: i64,
    false_awards: i64,
    #[sqlx(try_from = "StoredFlag")]
    failed: bool,
    #[sqlx(try_from = "StoredFlag")]
    drifted: bool,
    created_at: i64,
}

impl From<SeedRow> for Seed {
    fn from(row: SeedRow) -> Self {
        Seed {
            created_at: row.created_at,
            saved: NewSeed {
                qualification_id: row.qualification_id,
                seed: row.seed,
                criteria: row.criteria,
                agreed: row.agreed,
                false_awards: row.false_awards,
                failed: row.failed,
                drifted: row.drifted,
            },
        }
    }
}

/// The agreement `agreed / criteria`, 0 with no criterion.
fn agreement(criteria: i64, agreed: i64) -> f64 {
    if criteria > 0 {
        agreed as f64 / criteria as f64
    } else {
        0.0
    }
}

impl Store {
    /// Saves a calibration: it is the marker and model's latest from now on.
    pub async fn save_qualification(
        &self,
        new: &NewQualification,
    ) -> Result<Qualification, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let agreement = agreement(new.criteria, new.agreed);
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO marker_qualifications (id, marker, model, criteria, agreed, agreement, \
                 kappa, false_awards, non_work_page_awards, scripts, reference_digest, \
                 min_agreement, passed, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(&id)
            .bind(&new.marker)
            .bind(&new.model)
            .bind(new.criteria)
            .bind(new.agreed)
            .bind(agreement)
            .bind(new.kappa)
            .bind(new.false_awards)
            .bind(new.non_work_page_awards)
            .bind(new.scripts)
            .bind(&new.reference_digest)
            .bind(new.min_agreement)
            .bind(i64::from(new.passed))
            .bind(now),
        )
        .await?;
        Ok(Qualification {
            id,
            saved: new.clone(),
            agreement,
            created_at: now,
        })
    }

    /// Every saved calibration of `marker` and `model`, the latest first.
    pub async fn qualifications(
        &self,
        marker: &str,
        model: Option<&str>,
    ) -> Result<Vec<Qualification>, StoreError> {
        let rows: Vec<QualificationRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {QUALIFICATION_COLUMNS} FROM marker_qualifications \
             WHERE marker = $1 AND COALESCE(model, '') = $2 ORDER BY created_at DESC, id DESC"
        )))
        .bind(marker)
        .bind(model.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(Qualification::from).collect())
    }

    /// The latest saved calibration of `marker` and `model`, the one that counts.
    pub async fn latest_qualification(
        &self,
        marker: &str,
        model: Option<&str>,
    ) -> Result<Option<Qualification>, StoreError> {
        let row: Option<QualificationRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {QUALIFICATION_COLUMNS} FROM marker_qualifications \
             WHERE marker = $1 AND COALESCE(model, '') = $2 \
             ORDER BY created_at DESC, id DESC LIMIT 1"
        )))
        .bind(marker)
        .bind(model.unwrap_or(""))
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(Qualification::from))
    }

    /// Saves a seed the live marker marked.
    pub async fn save_seed(&self, new: &NewSeed) -> Result<Seed, StoreError> {
        let now = now_ms();
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO marker_seeds (id, qualification_id, seed, criteria, agreed, \
                 false_awards, failed, drifted, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(&new.qualification_id)
            .bind(&new.seed)
            .bind(new.criteria)
            .bind(new.agreed)
            .bind(new.false_awards)
            .bind(i64::from(new.failed))
            .bind(i64::from(new.drifted))
            .bind(now),
        )
        .await?;
        Ok(Seed {
            saved: new.clone(),
            created_at: now,
        })
    }

    /// The last `count` seeds counted against a qualification, the latest first.
    pub async fn recent_seeds(
        &self,
        qualification_id: &str,
        count: i64,
    ) -> Result<Vec<Seed>, StoreError> {
        let rows: Vec<SeedRow> = sqlx::query_as(
            "SELECT qualification_id, seed, criteria, agreed, false_awards, failed, drifted, \
             created_at FROM marker_seeds WHERE qualification_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind(qualification_id)
        .bind(count)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(Seed::from).collect())
    }

    /// The first seed that found the marker drifted, of a qualification: once there is one, the
    /// qualification is spent.
    pub async fn drifted_seed(&self, qualification_id: &str) -> Result<Option<Seed>, StoreError> {
        let row: Option<SeedRow> = sqlx::query_as(
            "SELECT qualification_id, seed, criteria, agreed, false_awards, failed, drifted, \
             created_at FROM marker_seeds WHERE qualification_id = $1 AND drifted = 1 \
             ORDER BY created_at, id LIMIT 1",
        )
        .bind(qualification_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(Seed::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_is_the_share_agreed_and_zero_without_criteria() {
        assert_eq!(agreement(0, 0), 0.0);
        assert_eq!(agreement(4, 3), 0.75);
        assert_eq!(agreement(8, 8), 1.0);
    }

    #[test]
    fn a_stored_qualification_reads_its_flags_and_agreement() {
        let row = QualificationRow {
            id: "q1".to_owned(),
            marker: "openai".to_owned(),
            model: Some("gpt-test".to_owned()),
            criteria: 10,
            agreed: 9,
            kappa: None,
            false_awards: 1,
            non_work_page_awards: 0,
            scripts: 3,
            reference_digest: "sha256:00".to_owned(),
            min_agreement: 0.85,
            passed: true,
            created_at: 1_700_000_000_000,
        };
        let read = Qualification::from(row.clone());
        assert_eq!(read.id, "q1");
        assert_eq!(read.agreement, 0.9);
        assert_eq!(read.created_at, 1_700_000_000_000);
        assert_eq!(
            read.saved,
            NewQualification {
                marker: "openai".to_owned(),
                model: Some("gpt-test".to_owned()),
                criteria: 10,
                agreed: 9,
                kappa: None,
                false_awards: 1,
                non_work_page_awards: 0,
                scripts: 3,
                reference_digest: "sha256:00".to_owned(),
                min_agreement: 0.85,
                passed: true,
            }
        );
        let failed = Qualification::from(QualificationRow {
            passed: false,
            ..row
        });
        assert!(!failed.saved.passed);
    }

    #[test]
    fn a_stored_seed_reads_its_flags() {
        let row = SeedRow {
            qualification_id: "q1".to_owned(),
            seed: "script-1/Q2".to_owned(),
            criteria: 4,
            agreed: 2,
            false_awards: 1,
            failed: false,
            drifted: true,
            created_at: 5,
        };
        let read = Seed::from(row);
        assert_eq!(
            read,
            Seed {
                saved: NewSeed {
                    qualification_id: "q1".to_owned(),
                    seed: "script-1/Q2".to_owned(),
                    criteria: 4,
                    agreed: 2,
                    false_awards: 1,
                    failed: false,
                    drifted: true,
                },
                created_at: 5,
            }
        );
    }
}
