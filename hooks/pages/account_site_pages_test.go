package pages

import (
	"strconv"
	"testing"

	"sitedrop/sites"
	"sitedrop/ui"
)

// TestPageChangesCut: the site page shows at most ui.MaxChangesShown
// entries of each list, counts the rest, and shows each entry's sizes.
func TestPageChangesCut(t *testing.T) {
	var d sites.Diff
	for i := range ui.MaxChangesShown + 3 {
		d.Added = append(d.Added, sites.DiffEntry{Path: "a" + strconv.Itoa(i), To: 2000})
	}
	d.Changed = []sites.DiffEntry{{Path: "c", From: 10, To: 1500}}
	d.Removed = []sites.DiffEntry{{Path: "r", From: 7}}
	c := pageChanges(4, 6, d)
	if c.From != 4 || c.To != 6 || len(c.Added) != ui.MaxChangesShown || c.MoreAdded != 3 || c.MoreChanged != 0 {
		t.Fatalf("cut: %d shown, %d more", len(c.Added), c.MoreAdded)
	}
	if c.Added[0] != (ui.ChangedFile{Path: "a0", To: ui.SizeShort(2000)}) ||
		c.Changed[0] != (ui.ChangedFile{Path: "c", From: "10 B", To: ui.SizeShort(1500)}) ||
		c.Removed[0] != (ui.ChangedFile{Path: "r", From: "7 B"}) {
		t.Errorf("entries: %+v %+v %+v", c.Added[0], c.Changed[0], c.Removed[0])
	}
}
