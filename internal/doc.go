// Package internal holds helperbuild's packages, one per concern; this is
// their map.
//
// A release runs left to right; release runs it, cmd/helperbuild asks it to.
// Arrows are imports; a package imports only packages on lower floors
// (internal/depcheck checks it, docs/architecture.md explains it).
//
//	command  cmd/helperbuild: flags + environment -> release.Request; prints the Report
//	            |
//	wiring   release: Prepare/Execute, PrepareMerge/Execute, VerifyTarget.Verify;
//	            |     session; one finish: publish -> report -> output files
//	            v
//	source   build (the pipeline below, Build -> product.Result)   product (images, platforms, attestations)
//	            |
//	            v
//	stage    recipe -> crossbuild -> dockerfile -> layer -> manifest -> verify -> publish
//	         (plan)    (compile)     (apply)       (write)  (assemble)  (check)   (place, tags last)
//	         beside:   attest (SBOM, provenance)   scaffold (init)   join (existing images -> index entries)
//	                   sign (cosign signatures)   merge (part files -> checked index entries)
//	            |
//	            v
//	io       registry (the one HTTP stack: retries, reads, writes, referrers)  imageref (read images)
//	         retry  outfile (atomic files)  gitmeta  sandbox
//	            |
//	            v
//	shared   platform  part  progress  elfcheck  pecheck  attestspec  rootfs  execerr
//
//	depcheck (these rules, a test)   fixture/: fixture/testkit  fixture/tartest  fixture/sandboxtest
//	         fixture/gitlabbase (test-only packages, apart from the product)
package internal
