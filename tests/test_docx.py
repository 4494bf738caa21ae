"""The Word reader (chunking.docx_text): every kind of text Word shows is read once, what Word does
not show is not, what the reader leaves out is said, and its work is linear in the XML."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import pytest

from chunking import load_document
from chunking.docx_text import LEFT_OUT, LeftOutWarning, read_docx
from tests.conftest import load_benchmark

text_to_docx = load_benchmark("pathological").text_to_docx  # the benchmark's many-styles files

docx = pytest.importorskip("docx", reason="python-docx is in the retrieval extra")
etree = pytest.importorskip("lxml.etree")
from docx.opc.constants import CONTENT_TYPE as CT  # noqa: E402
from docx.opc.constants import RELATIONSHIP_TYPE as RT  # noqa: E402
from docx.opc.packuri import PackURI  # noqa: E402
from docx.opc.part import Part  # noqa: E402
from docx.oxml import parse_xml  # noqa: E402

NAMESPACES = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "w14": "http://schemas.microsoft.com/office/word/2010/wordml",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wps": "http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "v": "urn:schemas-microsoft-com:vml",
    "o": "urn:schemas-microsoft-com:office:office",
    "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
}
DECLARE = " ".join(f'xmlns:{prefix}="{uri}"' for prefix, uri in NAMESPACES.items())


# --- building Word files: python-docx for the package, raw XML for the content ----------------------

def r(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def p(*inner: str, style: str = "") -> str:
    properties = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{properties}{''.join(inner)}</w:p>"


def field(code: str, *result: str) -> str:
    """A complex field: begin, its code, separate, its result runs, end."""
    return ('<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
            f'<w:r><w:instrText xml:space="preserve">{code}</w:instrText></w:r>'
            '<w:r><w:fldChar w:fldCharType="separate"/></w:r>' + "".join(result)
            + '<w:r><w:fldChar w:fldCharType="end"/></w:r>')


def box(text: str) -> str:
    return f"<w:txbxContent>{p(r(text))}</w:txbxContent>"


def table(*rows: str) -> str:
    return f"<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>{''.join(rows)}</w:tbl>"


def tr(*cells: str, deleted: bool = False) -> str:
    properties = '<w:trPr><w:del w:id="9" w:author="a"/></w:trPr>' if deleted else ""
    return f"<w:tr>{properties}{''.join(cells)}</w:tr>"


def tc(text: str, merge: str = "") -> str:
    properties = f'<w:tcPr><w:vMerge w:val="{merge}"/></w:tcPr>' if merge else ""
    return f"<w:tc>{properties}{p(r(text)) if text else p()}</w:tc>"


def word(path, body: str, *, styles: str = "", setup=None):
    """A .docx made by python-docx (its default template) with `body` (raw XML) as its content."""
    document = docx.Document()
    end = document.element.body[-1]  # the w:sectPr: content goes before it
    for element in parse_xml(f"<w:body {DECLARE}>{body}</w:body>"):
        end.addprevious(element)
    for style in parse_xml(f"<w:styles {DECLARE}>{styles}</w:styles>"):
        document.styles.element.append(style)
    if setup:
        setup(document)
    document.save(path)
    return path


def notes_part(kind: str, notes: dict[int, str]):
    """A setup adding a footnotes or endnotes part with these notes (id -> text) to a document."""
    def setup(document):
        bodies = "".join(f'<w:{kind} w:id="{i}"><w:p><w:r><w:{kind}Ref/></w:r>{r(" " + text)}</w:p></w:{kind}>'
                         for i, text in notes.items())
        xml = (f'<w:{kind}s {DECLARE}><w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r>'
               f"</w:p></w:{kind}>{bodies}</w:{kind}s>")
        content_type, reltype = {"footnote": (CT.WML_FOOTNOTES, RT.FOOTNOTES),
                                 "endnote": (CT.WML_ENDNOTES, RT.ENDNOTES)}[kind]
        part = Part(PackURI(f"/word/{kind}s.xml"), content_type, xml.encode(), document.part.package)
        document.part.relate_to(part, reltype)
    return setup


def text_of(tmp_path, body: str, **options) -> str:
    return read_docx(word(tmp_path / "case.docx", body, **options)).text


# --- every kind of content Word shows, and what it does not ------------------------------------------

ALTERNATE = ('<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic>'
             '<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
             f'<wps:wsp><wps:txbx>{box("Boxed")}</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor>'
             '</w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>'
             f'{box("Boxed")}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>')
TOC = ('<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Table of Contents"/></w:docPartObj></w:sdtPr>'
       f'<w:sdtContent>{p(r("Contents"), style="TOCHeading")}'
       '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> TOC \\o "1-3" \\h </w:instrText></w:r>'
       '<w:r><w:fldChar w:fldCharType="separate"/></w:r>'
       f'<w:hyperlink w:anchor="_Toc1">{r("Install")}<w:r><w:tab/></w:r>{field(" PAGEREF _Toc1 ", r("2"))}'
       '</w:hyperlink></w:p><w:p><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p></w:sdtContent></w:sdt>')

# id -> (body XML, the text read): what Word shows in its final view, once, and nothing else.
CASES = {
    "tracked insertion": (p(r("Kept "), f'<w:ins w:id="1" w:author="a">{r("added")}</w:ins>'), "Kept added"),
    "tracked deletion": (p(r("Kept"), '<w:del w:id="1" w:author="a"><w:r><w:delText> gone</w:delText></w:r></w:del>'),
                         "Kept"),
    "moved text": (p(f'<w:moveFrom w:id="1" w:author="a">{r("old place ")}</w:moveFrom>', r("Text "),
                     f'<w:moveTo w:id="2" w:author="a">{r("moved here")}</w:moveTo>'), "Text moved here"),
    "inline content control": (p(r("Name: "), f"<w:sdt><w:sdtPr><w:alias w:val='Name'/></w:sdtPr><w:sdtContent>"
                                 f"{r('Ada')}</w:sdtContent></w:sdt>"), "Name: Ada"),
    "block content control": (f"<w:sdt><w:sdtPr/><w:sdtContent>{p(r('Inside'))}{p(r('a control'))}</w:sdtContent>"
                              "</w:sdt>", "Inside\n\na control"),
    "table of contents": (TOC, "Contents\n\nInstall\t2"),
    "simple field": (p(r("Printed "), f'<w:fldSimple w:instr=" DATE ">{r("1 May")}</w:fldSimple>'), "Printed 1 May"),
    "complex field": (p(r("Page "), field(" PAGE ", r("7"))), "Page 7"),
    "field nested in a field's code": (
        p(field(' IF "' + '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> MERGEFIELD a </w:instrText>'
                '</w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>' + r("yes")
                + '<w:r><w:fldChar w:fldCharType="end"/></w:r>', r("Shown"))), "Shown"),
    "field never closed": (p(r("A "), '<w:r><w:fldChar w:fldCharType="begin"/></w:r>', r("code?")) + p(r("Next")),
                           "A\n\nNext"),
    "hyperlink": (p(r("See "), f'<w:hyperlink w:anchor="guide">{r("the guide")}</w:hyperlink>'), "See the guide"),
    "smart tag": (p(f'<w:smartTag w:element="place"><w:smartTagPr/>{r("Paris")}</w:smartTag>', r(" in May")),
                  "Paris in May"),
    "inline custom XML": (p(f'<w:customXml w:element="part">{r("P-100")}</w:customXml>'), "P-100"),
    "block custom XML": (f'<w:customXml w:element="section">{p(r("Custom block"))}</w:customXml>', "Custom block"),
    "text box in alternate content": (p(r("Anchor"), ALTERNATE), "Anchor\n\nBoxed"),
    "VML text box": (p(r("Anchor"), f"<w:r><w:pict><v:shape><v:textbox>{box('Old box')}</v:textbox></v:shape>"
                       "</w:pict></w:r>"), "Anchor\n\nOld box"),
    "symbol": (p(r("Dash"), '<w:r><w:sym w:font="Symbol" w:char="2014"/></w:r>', r("here")), "Dash—here"),
    "no-break and soft hyphens": (p("<w:r><w:t>well</w:t><w:noBreakHyphen/><w:t>known hy</w:t><w:softHyphen/>"
                                    "<w:t>phen</w:t></w:r>"), "well-known hyphen"),
    "tabs and breaks": (p("<w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t><w:cr/><w:t>d</w:t>"
                          '<w:ptab w:relativeTo="margin" w:alignment="right" w:leader="none"/><w:t>e</w:t></w:r>'),
                        "a\tb\nc\nd\te"),
    "page break between words": (p(r("end"), '<w:r><w:br w:type="page"/></w:r>', r("next")), "end\nnext"),
    "ruby": (p(f"<w:ruby><w:rubyPr/><w:rt>{r('かんじ')}</w:rt><w:rubyBase>{r('漢字')}</w:rubyBase></w:ruby>"),
             "漢字(かんじ)"),
    "math": (p(r("So "), "<m:oMath><m:r><m:t>E=mc</m:t></m:r><m:sSup><m:e/><m:sup><m:r><m:t>2</m:t></m:r></m:sup>"
               "</m:sSup></m:oMath>"), "So E=mc2"),
    "bidirectional wrappers": (p(f'<w:dir w:val="rtl">{r("one ")}</w:dir>', f'<w:bdo w:val="ltr">{r("two")}</w:bdo>'),
                               "one two"),
    "an element the reader has no rule for": (p(f"<w14:futureWrapper>{r('future text')}</w14:futureWrapper>"),
                                              "future text"),
    "hidden text": (p(r("Shown"), '<w:r><w:rPr><w:vanish/></w:rPr><w:t> hidden</w:t></w:r>'), "Shown"),
    "rows and cells in content controls": (
        table(f"<w:sdt><w:sdtContent>{tr(tc('a'), tc('b'))}</w:sdtContent></w:sdt>",
              f"<w:tr>{tc('c')}<w:sdt><w:sdtContent>{tc('d')}</w:sdtContent></w:sdt></w:tr>"), "a | b\nc | d"),
    "deleted table row": (table(tr(tc("kept"), tc("row")), tr(tc("gone"), tc("row"), deleted=True)), "kept | row"),
    "vertically merged cell": (table(tr(tc("A", "restart"), tc("B")), tr(tc("", "continue"), tc("C"))), "A | B\n| C"),
    "text box in a table cell": (table(f"<w:tr><w:tc>{p(r('cell'), ALTERNATE)}</w:tc></w:tr>"), "cell Boxed"),
}


@pytest.mark.parametrize(("body", "expected"), CASES.values(), ids=CASES)
def test_the_text_read_is_the_text_word_shows(tmp_path, body, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeftOutWarning)  # hidden text is said to be left out
        assert text_of(tmp_path, body) == expected


def shown_text(body: str) -> list[str]:
    """Every w:t and m:t text of `body` outside what Word does not show in its final view."""
    root = etree.fromstring(f"<w:body {DECLARE}>{body}</w:body>")
    unshown = ("ancestor::w:del or ancestor::w:moveFrom or ancestor::mc:Fallback or ancestor::w:r[w:rPr/w:vanish]"
               " or ancestor::w:tr[w:trPr/w:del]")
    return [t.text.strip() for t in root.xpath(f"(//w:t | //m:t)[not({unshown})]", namespaces=NAMESPACES)
            if t.text.strip()]


FIELD_CODES = {"yes", "code?"}  # w:t inside a field's code (a nested field's result, a field never separated)


@pytest.mark.parametrize("body", [body for body, _ in CASES.values()], ids=CASES)
def test_no_text_word_shows_is_lost(tmp_path, body):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeftOutWarning)
        text = " ".join(text_of(tmp_path, body).split())
    missing = [piece for piece in shown_text(body) if piece not in text and piece not in FIELD_CODES]
    assert missing == []


@pytest.mark.parametrize("body", [body for body, _ in CASES.values()], ids=CASES)
def test_text_in_both_branches_of_alternate_content_is_read_once(tmp_path, body):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeftOutWarning)
        assert text_of(tmp_path, body).count("Boxed") == ("Boxed" in body)


# --- headings and lists by style, through one dict -------------------------------------------------------

CHAPTER = ('<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:basedOn w:val="Heading2"/>'
           '</w:style><w:style w:type="paragraph" w:styleId="Bullets"><w:name w:val="Bullets"/>'
           '<w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>')


@pytest.mark.parametrize(("body", "expected"), [
    (p(r("One"), style="Chapter"), "## One"),  # outline level 1, inherited from Heading 2
    ('<w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr>' + r("Own level") + "</w:p>", "### Own level"),
    (p(r("Styled item"), style="Bullets"), "- Styled item"),
    ('<w:p><w:pPr><w:numPr><w:ilvl w:val="2"/><w:numId w:val="3"/></w:numPr></w:pPr>' + r("deep") + "</w:p>",
     "    - deep"),
    ('<w:p><w:pPr><w:pStyle w:val="Bullets"/><w:numPr><w:numId w:val="0"/></w:numPr></w:pPr>' + r("not a list")
     + "</w:p>", "not a list"),
    (p(r("No such style"), style="Missing"), "No such style"),
], ids=["inherited outline level", "own outline level", "numbered style", "list level", "numbering taken away",
        "unknown style id"])
def test_headings_and_lists_come_from_styles_and_numbering(tmp_path, body, expected):
    assert text_of(tmp_path, body, styles=CHAPTER) == expected


def test_a_basedon_cycle_ends(tmp_path):
    styles = ('<w:style w:type="paragraph" w:styleId="X"><w:name w:val="X"/><w:basedOn w:val="Y"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Y"><w:name w:val="Y"/><w:basedOn w:val="X"/></w:style>')
    assert text_of(tmp_path, p(r("loop"), style="X"), styles=styles) == "loop"


# --- footnotes and endnotes -------------------------------------------------------------------------------

def test_footnotes_and_endnotes_are_marked_where_referenced_and_follow_the_body(tmp_path):
    body = p(r("Pumps"), '<w:r><w:footnoteReference w:id="2"/></w:r>', r(" run"),
             '<w:r><w:endnoteReference w:id="1"/></w:r>') + p(r("Valves"), '<w:r><w:footnoteReference w:id="1"/></w:r>')

    def setup(document):
        notes_part("footnote", {1: "Two of them.", 2: "Rated at 40 l/min."})(document)
        notes_part("endnote", {1: "See the manual."})(document)

    assert text_of(tmp_path, body, setup=setup) == (
        "Pumps[^1] run[^i]\n\nValves[^2]\n\n[^1]: Rated at 40 l/min.\n\n[^2]: Two of them.\n\n[^i]: See the manual.")


def test_a_note_never_referenced_is_not_read(tmp_path):
    assert text_of(tmp_path, p(r("Body")), setup=notes_part("footnote", {1: "orphan"})) == "Body"


# --- what is left out is said --------------------------------------------------------------------------------

def with_header_footer_and_comments(document):
    section = document.sections[0]
    section.header.paragraphs[0].text = "Company confidential"
    section.footer.paragraphs[0].text = "Page footer"
    runs = document.add_paragraph("Commented").runs
    for text in ("first", "second", "third"):
        document.add_comment(runs, text=text, author="a")


def test_left_out_content_is_one_warning_naming_the_file_and_counts(tmp_path):
    path = word(tmp_path / "memo.docx", p(r("Body")), setup=with_header_footer_and_comments)
    with pytest.warns(LeftOutWarning) as record:
        document = load_document(path)
    assert [str(w.message) for w in record] == [
        f"file {str(path)!r}: left out 1 header, 1 footer and 3 comments (the reader reads the body, footnotes and "
        "endnotes)"]
    assert document.text == "Body\n\nCommented"


@pytest.mark.parametrize(("body", "kind"), [
    (p(r("a"), '<w:r><w:rPr><w:vanish/></w:rPr><w:t>b</w:t></w:r>'), "runs of hidden text"),
    (p('<w:r><w:drawing><wp:inline><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/'
       'chart"/></a:graphic></wp:inline></w:drawing></w:r>'), "charts"),
    (p('<w:r><w:drawing><wp:inline><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/'
       'diagram"/></a:graphic></wp:inline></w:drawing></w:r>'), "SmartArt diagrams"),
    (p('<w:r><w:object><o:OLEObject ProgID="Excel.Sheet.12"/></w:object></w:r>'), "embedded objects"),
    ('<w:altChunk r:id="rId99"/>', "imported documents (w:altChunk)"),
], ids=["hidden text", "chart", "SmartArt", "embedded object", "altChunk"])
def test_each_kind_left_out_is_counted(tmp_path, body, kind):
    with pytest.warns(LeftOutWarning, match=rf"case\.docx': left out 1 {re.escape(LEFT_OUT[kind])} \("):
        assert read_docx(word(tmp_path / "case.docx", body)).left_out == {kind: 1}


def test_an_empty_header_is_not_left_out_text(tmp_path):
    def setup(document):
        document.sections[0].header.is_linked_to_previous = False  # a header part with no text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_docx(word(tmp_path / "h.docx", p(r("Body")), setup=setup)).left_out == {}


# --- the package: title, errors --------------------------------------------------------------------------

def test_a_file_without_core_properties_has_no_title():
    assert read_docx(text_to_docx("Only line")).title == ""  # python-docx's stand-in says "Word Document"


@pytest.mark.parametrize("data", [b"", b"not a zip", b"PK\x03\x04" + b"\x00" * 40], ids=["empty", "text", "bad-zip"])
def test_bytes_that_are_not_a_word_file_are_one_line_naming_them(data):
    with pytest.raises(ValueError, match=r"^file 'upload\.docx' is not a readable \.docx file \(") as error:
        read_docx(data, name="upload.docx")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("source", "name", "message"), [(3, None, "source must be bytes or a path, got int"),
                                                        (b"", 3, "name must be a str or None, got int")])
def test_wrong_types_are_type_errors(source, name, message):
    with pytest.raises(TypeError, match=message):
        read_docx(source, name=name)


@pytest.mark.parametrize(("text", "expected"), [("a\r\nb", "a\n\nb"), ("<&>\x00\x07", "<&>\ufffd\ufffd"),
                                              ("tab\there", "tab\there"), ("\n\n", "")],
                         ids=["crlf", "markup and control characters", "tab", "empty lines"])
def test_text_to_docx_keeps_each_line_as_a_paragraph(text, expected):
    assert read_docx(text_to_docx(text)).text == expected


# --- linear work ---------------------------------------------------------------------------------------------

N = 3000  # styles and paragraphs


def many_styles(path, *, styles: int, paragraphs: int):
    """python-docx's template with `styles` styles of our own and `paragraphs` paragraphs, one style each in turn."""
    defined = "".join(f'<w:style w:type="paragraph" w:customStyle="1" w:styleId="Own{i}"><w:name w:val="Own {i}"/>'
                      '<w:basedOn w:val="Normal"/></w:style>' for i in range(styles))
    body = "".join(p(r(f"Paragraph {i}."), style=f"Own{i % styles}") for i in range(paragraphs))
    return word(path, body, styles=defined)


def xml_elements(path) -> int:
    with zipfile.ZipFile(path) as archive:
        return sum(sum(1 for _ in etree.fromstring(archive.read(name)).iter())
                   for name in ("word/document.xml", "word/styles.xml"))


def test_elements_visited_are_a_small_multiple_of_the_xmls(tmp_path):
    path = many_styles(tmp_path / "many.docx", styles=N, paragraphs=N)
    result = read_docx(path)
    assert result.text.count("\n\n") == N - 1
    assert result.visited <= 2 * xml_elements(path)


@pytest.mark.parametrize("styles", [1, N])
def test_each_paragraph_is_one_style_lookup_whatever_the_number_of_styles(tmp_path, styles):
    assert read_docx(many_styles(tmp_path / "many.docx", styles=styles, paragraphs=N)).style_lookups == N


def test_text_to_docx_writes_a_style_per_line():
    with zipfile.ZipFile(io.BytesIO(text_to_docx("a\nb\nc"))) as archive:
        styles = etree.fromstring(archive.read("word/styles.xml"))
    assert len(styles) == 4  # Normal and one per line
