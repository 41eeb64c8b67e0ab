//go:build !linux

package mailbox

// linkNew writes data as a new file named dst, failing with fs.ErrExist
// when dst exists: it stages dir/name and links that.
func linkNew(dir, name, dst string, data []byte, sync bool) error {
	return stageAndLink(dir, name, dst, data, sync)
}

// renameNoReplace moves src to dst, failing with fs.ErrExist when dst
// exists: it links dst and removes src, so dst has two links for a moment.
func renameNoReplace(src, dst string) error {
	return linkAndRemove(src, dst)
}
