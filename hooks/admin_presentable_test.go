package hooks

import (
	"reflect"
	"testing"

	"github.com/pocketbase/pocketbase/core"
)

// TestRelationsArePresentable checks that every record a sitedrop
// collection points at has a presentable field, so the admin dashboard
// names it (a deployment's owner by e-mail, a session's key by prefix, a
// webhook's site by slug) instead of showing "N/A".
func TestRelationsArePresentable(t *testing.T) {
	app, _ := newBareApp(t)
	cols, err := app.FindAllCollections()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range cols {
		if c.System {
			continue
		}
		for _, f := range c.Fields {
			rel, ok := f.(*core.RelationField)
			if !ok {
				continue
			}
			target, err := app.FindCollectionByNameOrId(rel.CollectionId)
			if err != nil {
				t.Fatalf("%s.%s points at a missing collection: %v", c.Name, rel.Name, err)
			}
			var names []string
			for _, tf := range target.Fields {
				if tf.GetHidden() {
					continue
				}
				if presentable(tf) {
					names = append(names, tf.GetName())
				}
			}
			if len(names) == 0 {
				t.Errorf("%s.%s points at %s, which has no presentable field: the dashboard shows N/A", c.Name, rel.Name, target.Name)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no relation field found: the test checks nothing")
	}
	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := users.Fields.GetByName("email").(*core.EmailField); !ok || !f.Presentable {
		t.Fatalf("users.email is not presentable: owners would not show their address")
	}
}

// presentable reads a field's Presentable option, which every PocketBase
// field type has as a struct field (there is no interface method for it).
func presentable(f core.Field) bool {
	v := reflect.ValueOf(f)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	p := v.FieldByName("Presentable")
	return p.IsValid() && p.Kind() == reflect.Bool && p.Bool()
}
