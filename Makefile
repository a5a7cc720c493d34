# The two set-up commands of the README, and a few conveniences.
.PHONY: run test bench fuzz

# The main job (see README.md).
run:
	cargo run --release -q -p examkit -- validate --explain \
		--assets examples/submissions/further-maths-paper.assets.json \
		examples/submissions/further-maths-paper.json

# Every suite; installs what each needs.
test:
	bash tests/run-all.sh

bench:
	cargo bench -p examkit-engine --bench validate

fuzz:
	fuzz/seed.sh && cd fuzz && cargo +nightly fuzz run validate corpus/validate
