//go:build !linux

package mailbox

// linkNew writes data as a new file named dst, failing with fs.ErrExist
// when dst exists: it stages dir/name and links that.
func linkNew(dir, name, dst string, data []byte, sync bool) error {
	return stageAndLink(dir, name, dst, data, sync)
}
