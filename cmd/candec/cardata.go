package main

import (
	"context"
	"flag"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cardata"
)

// builtInDBCHelp ends the help of a --dbc flag whose default is the
// car's DBC.
const builtInDBCHelp = "; where the default file is missing, the car's DBC built into candec"

// carDBC adds --dbc to fs, whose default is the car's DBC: the file
// cardata.DBCFile, or its copy built into candec where the file is
// missing (outside a clone).
func carDBC(fs *flag.FlagSet, usage string) *string {
	return fs.String("dbc", cardata.DBCFile, usage+builtInDBCHelp)
}

// carDBCFiles returns the files of carDBC's flag in fs, whose value is
// list; builtIn says that the built-in copy stands in for them instead,
// as it does when the flag was not given and its default is missing.
// The files are then nil: none on disk is an input.
func carDBCFiles(fs *flag.FlagSet, list []string) (files []string, builtIn bool) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "dbc" })
	if !given && cardata.Missing(cardata.DBCFile) {
		return nil, true
	}
	return list, false
}

// loadCarDBC loads files, or the built-in copy of the car's DBC when
// builtIn (see carDBCFiles). name is what was loaded, for messages.
func loadCarDBC(ctx context.Context, files []string, builtIn bool) (db *dbc.Database, name string, err error) {
	if builtIn {
		db, err := cardata.LoadDBC()
		return db, cardata.DBCName, err
	}
	db, err = dbc.LoadContext(ctx, files...)
	return db, strings.Join(files, ","), err
}
