# The two set-up commands of the README, and a few conveniences.
.PHONY: run build dist test bench fuzz

# The main job: the service on its embedded SQLite database in ./data, on 127.0.0.1:8080, with
# the sample bank. Installs the native packages it needs first (see scripts/native-packages.sh).
run: build
	OMP_THREAD_LIMIT=1 cargo run --locked -p examkit -- serve

# The native packages, then the binary; `make test` runs this step on its own.
build:
	bash scripts/native-packages.sh
	cargo build --locked -p examkit

# The binary to install, in target/dist/examkit: stripped and optimised as a whole program (the
# `dist` profile in Cargo.toml; about 14 minutes on 2 cores from cold), and linked with
# packed relative relocations: still position-independent, 3 MB smaller, and needing glibc 2.36
# or newer to run.
dist:
	bash scripts/native-packages.sh
	cargo rustc --locked --profile dist -p examkit --bin examkit -- -C link-arg=-Wl,-z,pack-relative-relocs

# Every suite; installs what each needs.
test:
	bash tests/run-all.sh

bench:
	cargo bench -p examkit-engine --bench validate

fuzz:
	fuzz/seed.sh && cd fuzz && cargo +nightly fuzz run validate corpus/validate
