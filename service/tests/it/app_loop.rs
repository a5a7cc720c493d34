//! The teacher's loop in the app, over real HTTP on SQLite and PostgreSQL: the first account made
//! with the setup token, the bank searched, a paper built, changed and saved (and a stale save
//! refused with what changed), a class printed from a pasted roster, and scans uploaded several
//! at once, each with its outcome; another account sees none of it.

use super::*;

on_both!(
    the_first_account_is_made_with_the_setup_token_once,
    a_paper_is_built_from_the_bank_and_saved_as_revisions,
    a_class_is_printed_from_a_pasted_roster_and_its_scans_uploaded,
);

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

async fn the_first_account_is_made_with_the_setup_token_once(db: Db) {
    let s = start_with(db, generous(), |state| {
        state.app.setup_token = Some(examkit::config::SetupToken::new(TOKEN));
    })
    .await;
    let mut b = Browser::new(&s);
    // No account yet: the app and its sign-in page send a browser to the first-run form.
    assert_eq!(b.get("/app/").await.location(), "/app/setup");
    assert_eq!(b.get("/app/sign-in").await.location(), "/app/setup");
    let form = b.get("/app/setup").await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(form.body.contains("Setup token"));
    let send = |csrf: &str, token: &'static str, again: &'static str| {
        vec![
            ("csrf".to_owned(), csrf.to_owned()),
            ("setup_token".to_owned(), token.to_owned()),
            ("name".to_owned(), "Ann Teacher".to_owned()),
            ("email".to_owned(), "Ann@School.test".to_owned()),
            ("password".to_owned(), PASSWORD.to_owned()),
            ("password_again".to_owned(), again.to_owned()),
        ]
    };
    let post = |b: &Browser, form: Vec<(String, String)>| {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .finish();
        b.client
            .post(format!("{}/app/setup", b.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
    };
    // A wrong token, then passwords that differ: refused with why, nothing made.
    let wrong = {
        let request = post(&b, send(&form.csrf(), "not-the-token", PASSWORD));
        b.send(request).await
    };
    assert_eq!(wrong.status, 403, "{}", wrong.body);
    assert!(wrong.body.contains("not the setup token"), "{}", wrong.body);
    assert!(
        wrong.body.contains("value=\"Ann Teacher\""),
        "the name is kept"
    );
    let differ = {
        let request = post(&b, send(&wrong.csrf(), TOKEN, "another password"));
        b.send(request).await
    };
    assert_eq!(differ.status, 400, "{}", differ.body);
    assert!(differ.body.contains("not the same"));
    assert!(!s.store.has_accounts().await.expect("accounts"));
    // Without the CSRF token nothing is read.
    let mut forged = send(&differ.csrf(), TOKEN, PASSWORD);
    forged[0].1 = "forged".into();
    let request = post(&b, forged);
    assert_eq!(b.send(request).await.status, 403);
    assert!(!s.store.has_accounts().await.expect("accounts"));
    // The right token: the account is made, verified, and signed in.
    let made = {
        let request = post(&b, send(&differ.csrf(), TOKEN, PASSWORD));
        b.send(request).await
    };
    assert_eq!(made.status, 303, "{}", made.body);
    assert_eq!(made.location(), "/app/");
    assert!(b.session().is_some(), "signed in");
    let (user, _) = s
        .store
        .user_by_email("ann@school.test")
        .await
        .expect("read")
        .expect("the account");
    assert!(user.verified && !user.restricted);
    assert_eq!(user.name, "Ann Teacher");
    assert_eq!(b.get("/app/keys").await.status, 200);
    // Never offered again: the form sends a browser to sign in, and a second account is not made
    // with the same token.
    let mut other = Browser::new(&s);
    assert_eq!(other.get("/app/setup").await.location(), "/app/sign-in");
    let sign_in = other.get("/app/sign-in").await;
    assert_eq!(sign_in.status, 200);
    let csrf = sign_in.csrf();
    let again = other
        .post(
            "/app/setup",
            &[
                ("csrf", &csrf),
                ("setup_token", TOKEN),
                ("name", "Eve"),
                ("email", "eve@evil.test"),
                ("password", PASSWORD),
                ("password_again", PASSWORD),
            ],
        )
        .await;
    assert_eq!(again.location(), "/app/sign-in");
    assert!(
        s.store
            .user_by_email("eve@evil.test")
            .await
            .expect("read")
            .is_none()
    );

    // A service started with no token (accounts made by the command line) offers no first run.
    let plain = start(Db::Sqlite, generous()).await;
    let mut c = Browser::new(&plain);
    assert_eq!(c.get("/app/setup").await.location(), "/app/sign-in");
    let page = c.get("/app/sign-in").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("examkit users create"));
}

/// The value of the first `name="pin"` fields of a page, in order.
fn pins(page: &str) -> Vec<String> {
    field_values(page, "pin")
}

async fn a_paper_is_built_from_the_bank_and_saved_as_revisions(db: Db) {
    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let (mut b, _user) = signed_in(&s, "ann@school.test").await;

    // The bank by facet and words: each result's maths is typeset, never raw.
    let found = b.get("/app/bank?subject=further-maths&q=complex").await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert!(found.body.contains("id=\"results\""), "{}", found.body);
    assert!(
        found.body.contains("Complex number arithmetic"),
        "{}",
        found.body
    );
    assert!(
        found.body.contains("<span class=\"math\""),
        "maths rendered"
    );
    assert!(found.body.contains("<svg"), "as SVG");
    assert!(!found.body.contains("$z = 3 - 4i$"), "no raw maths");
    assert!(
        found.body.contains("aria-label=\"z = 3 - 4i\""),
        "its text as its name"
    );
    assert!(
        found.body.contains("Mark scheme ("),
        "the scheme on request"
    );
    // The paper (module) facet is offered and filters as the API's does.
    assert!(found.body.contains("id=\"f-module\""), "{}", found.body);
    let by_module = b.get("/app/bank?module=core-pure&q=complex").await;
    assert!(
        by_module.body.contains("Complex number arithmetic"),
        "{}",
        by_module.body
    );
    let elsewhere = b.get("/app/bank?module=statistics-1&q=complex").await;
    assert!(
        elsewhere.body.contains("id=\"no-results\""),
        "{}",
        elsewhere.body
    );
    // A bad filter is said in the API's words, on the page.
    let bad = b.get("/app/bank?year=1800").await;
    assert_eq!(bad.status, 200);
    assert!(bad.body.contains("id=\"search-problems\""), "{}", bad.body);
    assert!(bad.body.contains("year"), "{}", bad.body);
    // Paged as the API pages.
    let all = b.get("/app/bank").await;
    let next = link_rel_next(&all.body).expect("a next page");
    assert!(next.contains("cursor="), "{next}");
    let second = b.get(&next).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert!(second.body.contains("id=\"results\""));

    // Start a paper with the first result.
    let first_pin = pins(&found.body)[0].clone();
    let csrf = found.csrf();
    let made = b
        .post("/app/papers", &[("csrf", &csrf), ("pin", &first_pin)])
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let paper_path = made.location().to_owned();
    assert!(paper_path.starts_with("/app/papers/"), "{paper_path}");
    let paper_id = paper_path.trim_start_matches("/app/papers/").to_owned();

    // Add two more from the bank, searched with the paper open.
    let search = b
        .get(&format!("/app/bank?paper={paper_id}&subject=maths"))
        .await;
    assert_eq!(search.status, 200, "{}", search.body);
    assert!(search.body.contains("Adding to"), "{}", search.body);
    let offered = pins(&search.body);
    assert!(offered.len() >= 2, "{}", search.body);
    for (i, pin) in offered.iter().take(2).enumerate() {
        let csrf = search.csrf();
        let revision = (i + 1).to_string();
        let back = format!("/app/bank?paper={paper_id}&subject=maths");
        let added = b
            .post(
                &format!("{paper_path}/add"),
                &[
                    ("csrf", &csrf),
                    ("pin", pin),
                    ("revision", &revision),
                    ("back", &back),
                ],
            )
            .await;
        assert_eq!(added.status, 303, "{}", added.body);
        assert_eq!(added.location(), back);
    }
    let builder = b.get(&paper_path).await;
    assert_eq!(builder.status, 200, "{}", builder.body);
    let order = pins(&builder.body);
    assert_eq!(order.len(), 3, "{}", builder.body);
    assert!(
        builder.body.contains("Latest revision 3"),
        "{}",
        builder.body
    );
    assert!(builder.body.contains("id=\"totals\""));

    // Move the last up and remove the first: shown unsaved, nothing saved.
    let draft = |b: &Builder, action: &str| b.form(action);
    let view = Builder::read(&builder.body, 3);
    let moved = post_pairs(&mut b, &paper_path, draft(&view, "up:2")).await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert!(moved.body.contains("id=\"unsaved\""));
    assert_eq!(
        pins(&moved.body),
        [order[0].clone(), order[2].clone(), order[1].clone()]
    );
    let view = Builder::read(&moved.body, 3);
    let removed = post_pairs(&mut b, &paper_path, draft(&view, "remove:0")).await;
    assert_eq!(pins(&removed.body), [order[2].clone(), order[1].clone()]);
    assert!(
        b.get(&paper_path).await.body.contains("Latest revision 3"),
        "nothing saved yet"
    );
    // A bad action is a bad form, and a forged pin too.
    let mut odd = Builder::read(&removed.body, 3).form("spin:1");
    assert_eq!(
        post_pairs(&mut b, &paper_path, odd.clone()).await.status,
        400
    );
    odd.retain(|(k, _)| k != "action");
    odd.push(("pin".into(), "not-a-pin".into()));
    assert_eq!(post_pairs(&mut b, &paper_path, odd).await.status, 400);

    // Save with a new title: revision 4.
    let mut view = Builder::read(&removed.body, 3);
    view.title = "Year 12 mock".into();
    let saved = post_pairs(&mut b, &paper_path, view.form("save")).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(saved.location(), format!("{paper_path}?saved=4"));
    let after = b.get(saved.location()).await;
    assert!(
        after.body.contains("Saved as revision 4."),
        "{}",
        after.body
    );
    assert!(after.body.contains("Paper: Year 12 mock"));
    assert_eq!(pins(&after.body), [order[2].clone(), order[1].clone()]);
    // An empty title is refused by the API's rule, with its words, and the draft kept.
    let mut empty = Builder::read(&after.body, 4);
    empty.title = String::new();
    let refused = post_pairs(&mut b, &paper_path, empty.form("save")).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("id=\"problems\""), "{}", refused.body);

    // A save from revision 3 now that 4 exists: nothing saved, what changed shown, draft kept.
    let mut stale = Builder::read(&builder.body, 3);
    stale.title = "Another title".into();
    let conflict = post_pairs(&mut b, &paper_path, stale.form("save")).await;
    assert_eq!(conflict.status, 409, "{}", conflict.body);
    assert!(conflict.body.contains("id=\"stale\""));
    assert!(
        conflict.body.contains("The title became “Year 12 mock”."),
        "{}",
        conflict.body
    );
    assert!(conflict.body.contains("was removed."), "{}", conflict.body);
    assert!(
        conflict.body.contains("value=\"Another title\""),
        "the draft is kept"
    );
    assert!(b.get(&paper_path).await.body.contains("Latest revision 4"));
    // Saved on top, from the conflict page's form (its base is the latest).
    let on_top = Builder::read(&conflict.body, 4);
    let saved = post_pairs(&mut b, &paper_path, on_top.form("save")).await;
    assert_eq!(saved.location(), format!("{paper_path}?saved=5"));

    // The papers list, with revisions newest first; the revision page with its PDFs.
    let list = b.get("/app/papers").await;
    assert!(list.body.contains("Another title"), "{}", list.body);
    let r5 = list.body.find("revisions/5").expect("r5");
    let r1 = list.body.find("revisions/1\"").expect("r1");
    assert!(r5 < r1, "newest first");
    let revision = b.get(&format!("{paper_path}/revisions/5")).await;
    assert_eq!(revision.status, 200, "{}", revision.body);
    assert!(revision.body.contains("question-paper.pdf"));
    let pdf = b
        .get(&format!("{paper_path}/revisions/5/question-paper.pdf"))
        .await;
    assert_eq!(pdf.status, 200);
    assert_eq!(pdf.headers["content-type"], "application/pdf");

    // Another teacher sees none of it.
    let (mut eve, _) = signed_in(&s, "eve@school.test").await;
    for path in [
        paper_path.clone(),
        format!("{paper_path}/revisions/1"),
        format!("{paper_path}/revisions/1/mark-scheme.pdf"),
    ] {
        assert_eq!(eve.get(&path).await.status, 404, "{path}");
    }
    assert!(!eve.get("/app/papers").await.body.contains("Another title"));
    let csrf = eve.get("/app/papers").await.csrf();
    let forged = eve
        .post(
            &format!("{paper_path}/add"),
            &[("csrf", &csrf), ("pin", &first_pin), ("revision", "5")],
        )
        .await;
    assert_eq!(forged.status, 404);
    // Nor can she change or save it, nor search the bank to add to it.
    for action in ["up:1", "save"] {
        let mut form = on_top.form(action);
        for (name, value) in form.iter_mut() {
            if name == "csrf" {
                *value = csrf.clone();
            }
        }
        let changed = post_pairs(&mut eve, &paper_path, form).await;
        assert_eq!(changed.status, 404, "{action}: {}", changed.body);
    }
    let adding = eve.get(&format!("/app/bank?paper={paper_id}")).await;
    assert_eq!(adding.status, 404, "{}", adding.body);
    let after = b.get("/app/papers").await;
    assert!(after.body.contains("revisions/5"), "{}", after.body);
    assert!(!after.body.contains("revisions/6"), "{}", after.body);
}

fn link_rel_next(page: &str) -> Option<String> {
    let at = page.find("rel=\"next\" href=\"")?;
    let rest = &page[at + "rel=\"next\" href=\"".len()..];
    Some(rest[..rest.find('"')?].replace("&amp;", "&"))
}

/// The builder's form as a page shows it.
struct Builder {
    csrf: String,
    base: String,
    title: String,
    pins: Vec<String>,
}

impl Builder {
    fn read(page: &str, _revision: i64) -> Builder {
        let value = |name: &str| {
            field_values(page, name)
                .into_iter()
                .next()
                .unwrap_or_default()
        };
        let csrf = {
            let at = page.find("name=\"csrf\" value=\"").expect("csrf");
            let rest = &page[at + 19..];
            rest[..rest.find('"').expect("quote")].to_owned()
        };
        Builder {
            csrf,
            base: value("base"),
            title: value("title").replace("&amp;", "&"),
            pins: field_values(page, "pin"),
        }
    }

    fn form(&self, action: &str) -> Vec<(String, String)> {
        let mut form = vec![
            ("csrf".to_owned(), self.csrf.clone()),
            ("base".to_owned(), self.base.clone()),
            ("title".to_owned(), self.title.clone()),
            ("writing_space".to_owned(), "smart".to_owned()),
        ];
        form.extend(self.pins.iter().map(|p| ("pin".to_owned(), p.clone())));
        form.push(("action".to_owned(), action.to_owned()));
        form
    }
}

async fn post_pairs(b: &mut Browser, path: &str, form: Vec<(String, String)>) -> Page {
    post_form(b, path, form).await
}

/// A `multipart/form-data` body: the CSRF field first, then each file.
fn multipart(csrf: &str, files: &[(&str, &str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "examkit-test-boundary-7c1d";
    let mut body = Vec::new();
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n")
            .as_bytes(),
    );
    for (name, content_type, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: {content_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn a_class_is_printed_from_a_pasted_roster_and_its_scans_uploaded(db: Db) {
    use common::marking::{SAMPLE_QUESTIONS, exported_paper};

    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..1]).await;
    let revision_path = format!("/app/papers/{}/revisions/1", exported.id);
    let page = b.get(&revision_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let csrf = page.csrf();
    let print = format!("{revision_path}/class-set");

    // Six lines copied from a spreadsheet, one with three columns: nothing is made, the line is
    // named with why, and the roster is kept in the form.
    let roster = "Name\tCandidate number\nAda Lovelace\t0001\nAlan Turing\t0002\nEmmy Noether\t0003\tExtra\nGrace Hopper, 0004\nKatherine Johnson\n";
    let refused = b
        .post(
            &print,
            &[("csrf", &csrf), ("roster", roster), ("title", "12B mock")],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("id=\"print-problems\""));
    assert!(refused.body.contains("Line 4"), "{}", refused.body);
    assert!(
        refused.body.contains("it has 3 columns"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains("Katherine Johnson"),
        "the roster is kept"
    );
    // A repeated candidate number lands on its line too.
    let repeated = b
        .post(
            &print,
            &[("csrf", &csrf), ("roster", "Ada\t0001\nAlan\t0001\n")],
        )
        .await;
    assert_eq!(repeated.status, 422);
    assert!(repeated.body.contains("Line 2"), "{}", repeated.body);
    // Both a roster and copies, or neither, are refused.
    let both = b
        .post(
            &print,
            &[("csrf", &csrf), ("roster", "Ada"), ("copies", "3")],
        )
        .await;
    assert_eq!(both.status, 422);
    let neither = b.post(&print, &[("csrf", &csrf)]).await;
    assert_eq!(neither.status, 422);
    assert!(
        s.store.class_sets(&user).await.expect("sets").is_empty(),
        "nothing made"
    );

    // Fixed: the set is made, named, and its page offers the print PDF, the extra sheet and the
    // mark scheme.
    let fixed = roster.replace("\tExtra", "");
    let made = b
        .post(
            &print,
            &[("csrf", &csrf), ("roster", &fixed), ("title", "12B mock")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let set_path = made.location().to_owned();
    let sets = s.store.class_sets(&user).await.expect("sets");
    assert_eq!(sets.len(), 1);
    assert_eq!(sets[0].copies, 5);
    assert_eq!(sets[0].title, "12B mock");
    let copies = s.store.class_set_copies(&sets[0].id).await.expect("copies");
    assert_eq!(copies[3].name.as_deref(), Some("Grace Hopper"));
    assert_eq!(copies[3].candidate_number.as_deref(), Some("0004"));
    assert_eq!(copies[4].candidate_number, None);
    let set_page = b.get(&set_path).await;
    assert_eq!(set_page.status, 200, "{}", set_page.body);
    for file in ["print.pdf", "extra-sheet.pdf"] {
        let pdf = b.get(&format!("{set_path}/{file}")).await;
        assert_eq!(pdf.status, 200, "{file}");
        assert_eq!(pdf.headers["content-type"], "application/pdf");
    }
    assert!(set_page.body.contains("mark-scheme.pdf"));
    assert!(set_page.body.contains("enctype=\"multipart/form-data\""));
    assert!(set_page.body.contains("multiple"));

    // Upload in one go: the print PDF itself (a stack of blank copies), a file that is not a
    // PDF, and one that says it is a PDF but is not: each outcome in words.
    let stack = s
        .store
        .class_set_pdf(&user, &sets[0].id)
        .await
        .expect("read")
        .expect("the PDF");
    let csrf = set_page.csrf();
    let (content_type, body) = multipart(
        &csrf,
        &[
            ("stack.pdf", "application/pdf", &stack),
            ("notes.txt", "text/plain", b"hello"),
            ("broken.pdf", "application/pdf", b"%PDF-1.7 not really"),
        ],
    );
    let request = b
        .client
        .post(format!("{}{set_path}/scans", b.base))
        .header("content-type", content_type.clone())
        .body(body.clone());
    let uploaded = b.send(request).await;
    assert_eq!(uploaded.status, 200, "{}", uploaded.body);
    let pages = sets[0].copies * sets[0].pages_per_copy;
    assert!(
        uploaded
            .body
            .contains(&format!("stack.pdf</strong>: added, {pages} pages")),
        "{}",
        uploaded.body
    );
    assert!(
        uploaded
            .body
            .contains("notes.txt</strong>: refused, not a PDF or image"),
        "{}",
        uploaded.body
    );
    assert!(
        uploaded.body.contains("broken.pdf</strong>: refused,"),
        "{}",
        uploaded.body
    );
    assert_eq!(
        stack_file_count(&s, &user, &sets[0]).await,
        1,
        "only the good file is kept"
    );
    // From the page's script: the outcome list alone.
    let (content_type, body) = multipart(&csrf, &[("later.pdf", "application/pdf", &stack)]);
    let request = b
        .client
        .post(format!("{}{set_path}/scans", b.base))
        .header("content-type", content_type)
        .header("x-requested-with", "fetch")
        .body(body);
    let fragment = b.send(request).await;
    assert_eq!(fragment.status, 200, "{}", fragment.body);
    assert!(
        fragment.body.starts_with("<div role=\"status\"><ul"),
        "{}",
        fragment.body
    );
    assert!(fragment.body.contains("later.pdf</strong>: added"));
    // Without the CSRF field first, nothing is read.
    let (content_type, body) = multipart("forged", &[("x.pdf", "application/pdf", &stack)]);
    let request = b
        .client
        .post(format!("{}{set_path}/scans", b.base))
        .header("content-type", content_type)
        .body(body);
    assert_eq!(b.send(request).await.status, 403);
    assert_eq!(stack_file_count(&s, &user, &sets[0]).await, 2);

    // Another teacher: not found, nothing added.
    let (mut eve, _) = signed_in(&s, "eve@school.test").await;
    let eve_csrf = eve.get("/app/papers").await.csrf();
    let (content_type, body) = multipart(&eve_csrf, &[("x.pdf", "application/pdf", &stack)]);
    let request = eve
        .client
        .post(format!("{}{set_path}/scans", eve.base))
        .header("content-type", content_type)
        .body(body);
    assert_eq!(eve.send(request).await.status, 404);
    assert_eq!(eve.get(&revision_path).await.status, 404);
    for file in ["print.pdf", "extra-sheet.pdf"] {
        let path = format!("{set_path}/{file}");
        assert_eq!(eve.get(&path).await.status, 404, "{path}");
    }
    let stolen = eve
        .post(&print, &[("csrf", &eve_csrf), ("copies", "2")])
        .await;
    assert_eq!(stolen.status, 404);
}

async fn stack_file_count(
    s: &Server,
    user: &str,
    set: &examkit::store::class_sets::SetRow,
) -> usize {
    let set = s
        .store
        .class_set(user, &set.id)
        .await
        .expect("read")
        .expect("the set");
    s.store.stack_pages(&set).await.expect("the stack").0.len()
}
