//! The page process (`examkit page-reader`): reads requests from stdin and answers on stdout,
//! one at a time, until stdin closes. It sets its own limits first: its address space (so a
//! file that needs more memory ends this process, not the service) and no core files; before
//! each request, the processor time that request may use.
//!
//! [`answer`] is the whole of its work and holds no state, so the service can also call it in
//! its own process (`--page-processes 0`) and get the same answers.

use std::io::{self, BufReader, BufWriter};
use std::panic::{AssertUnwindSafe, catch_unwind};

use examkit_scan::ScanError;
use nix::sys::resource::{Resource, UsageWho, getrlimit, getrusage, setrlimit};

use super::wire::{Request, Response, read_frame, write_frame};

/// The limits a page process sets itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildLimits {
    /// Its address space, in bytes.
    pub memory_bytes: u64,
    /// Processor time each request may use, in seconds.
    pub cpu_seconds: u64,
}

/// Runs the page process over this process's stdin and stdout; returns when stdin closes.
pub fn run(limits: ChildLimits) -> Result<(), String> {
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(|e| format!("no core files: {e}"))?;
    setrlimit(
        Resource::RLIMIT_AS,
        limits.memory_bytes,
        limits.memory_bytes,
    )
    .map_err(|e| format!("the memory limit cannot be set: {e}"))?;
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    loop {
        let Some((request, file)) = read_frame::<_, Request>(&mut input)
            .map_err(|e| format!("a request cannot be read: {e}"))?
        else {
            return Ok(());
        };
        allow_cpu(limits.cpu_seconds)?;
        let (response, pixels) = answer(&request, &file);
        drop(file);
        write_frame(&mut output, &response, &pixels)
            .map_err(|e| format!("an answer cannot be written: {e}"))?;
    }
}

/// Lets this process use `seconds` more of processor time: past it, the kernel ends it
/// (`SIGXCPU`), which the service reads as a page that took too long.
fn allow_cpu(seconds: u64) -> Result<(), String> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(|e| format!("getrusage: {e}"))?;
    let used = [usage.user_time(), usage.system_time()]
        .iter()
        .map(|t| u64::try_from(t.tv_sec()).unwrap_or(0))
        .sum::<u64>();
    let (_, hard) = getrlimit(Resource::RLIMIT_CPU).map_err(|e| format!("getrlimit: {e}"))?;
    let soft = used
        .saturating_add(seconds.max(1))
        .saturating_add(1)
        .min(hard);
    setrlimit(Resource::RLIMIT_CPU, soft, hard)
        .map_err(|e| format!("the processor-time limit cannot be set: {e}"))
}

/// The answer to `request` about `file`: a page count, a drawn page (its pixels returned beside
/// the answer), or why the file cannot be read. A reader that panics is a file it cannot read.
pub fn answer(request: &Request, file: &[u8]) -> (Response, Vec<u8>) {
    let answered = catch_unwind(AssertUnwindSafe(|| work(request, file)));
    match answered {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => (Response::Refused { error }, Vec::new()),
        Err(_) => (
            Response::Refused {
                error: ScanError::Unreadable("the page's reader failed on it".into()),
            },
            Vec::new(),
        ),
    }
}

fn work(request: &Request, file: &[u8]) -> Result<(Response, Vec<u8>), ScanError> {
    let format = request.format()?;
    match *request {
        Request::Check {
            dpi,
            max_pixels,
            max_pages,
            ..
        } => {
            let pages = examkit_scan::check_pages(file, format, dpi, max_pixels, max_pages)?;
            Ok((Response::Checked { pages }, Vec::new()))
        }
        Request::Draw {
            page,
            dpi,
            max_pixels,
            text_layer,
            ..
        } => {
            let (raster, layer) = if text_layer {
                let drawn = examkit_scan::render_for_index(file, format, page, dpi, max_pixels)?;
                (drawn.raster, drawn.layer)
            } else {
                let raster =
                    examkit_scan::render_page_limited(file, format, page, dpi, max_pixels)?;
                (raster, None)
            };
            let (width, height) = raster.dimensions();
            Ok((
                Response::Drawn {
                    width,
                    height,
                    layer,
                },
                raster.into_raw(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_pdf_is_refused_with_the_readers_reason() {
        let request = Request::Check {
            media_type: "application/pdf".into(),
            dpi: 150,
            max_pixels: examkit_scan::DEFAULT_MAX_PIXELS,
            max_pages: 80,
        };
        let (response, payload) = answer(&request, b"not a pdf");
        assert!(payload.is_empty());
        assert!(
            matches!(&response, Response::Refused { error: ScanError::Unreadable(m) } if m.contains("no %PDF- header")),
            "{response:?}"
        );
    }

    #[test]
    fn a_page_is_drawn_with_its_pixels_beside_the_answer() {
        let pdf = crate::inspect::blank_pdf(2);
        let request = Request::Draw {
            media_type: "application/pdf".into(),
            page: 2,
            dpi: 36,
            max_pixels: examkit_scan::DEFAULT_MAX_PIXELS,
            text_layer: true,
        };
        let (response, pixels) = answer(&request, &pdf);
        let Response::Drawn {
            width,
            height,
            layer,
        } = response
        else {
            panic!("not drawn: {response:?}");
        };
        assert!(
            (297..=298).contains(&width) && (420..=421).contains(&height),
            "A4 at 36 dpi: {width}x{height}"
        );
        assert_eq!(pixels.len(), (width * height) as usize);
        assert!(pixels.iter().all(|p| *p == 255), "a blank page is white");
        assert_eq!(layer.map(|l| l.words.len()), Some(0));
        let past_the_end = Request::Draw {
            media_type: "application/pdf".into(),
            page: 3,
            dpi: 36,
            max_pixels: examkit_scan::DEFAULT_MAX_PIXELS,
            text_layer: false,
        };
        let (answer, _) = answer(&past_the_end, &pdf);
        assert_eq!(
            answer,
            Response::Refused {
                error: ScanError::PageOutOfRange { page: 3, pages: 2 }
            }
        );
    }
}
