/*
 * Relocate: copy the classes and resources of some jars into one jar, moving packages to new names
 * (the way the Maven shade / Gradle shadow plugins "relocate" dependencies).
 *
 * Part of the Iceberg REST CTK (ctk/spark/jars.py compiles and runs it at `ctk spark-jars` time).
 * It uses only the JDK and the ASM copy that PySpark ships (org.apache.xbean.asm9, xbean-asm9-shaded).
 *
 * Usage: java -cp <xbean-asm9-shaded.jar>:<dir> Relocate OUT.jar --map FROM=TO [--map FROM=TO ...] IN.jar...
 *   FROM and TO are dotted package prefixes (com.fasterxml.jackson=org.apache.iceberg.shaded.com.fasterxml.jackson).
 *
 * What is rewritten:
 *   - every type reference in a class file (descriptors, signatures, owners, annotations, inner classes,
 *     invokedynamic handles), through ClassRemapper;
 *   - String constants that name a class or resource under a FROM prefix, dotted or slashed (reflection:
 *     Class.forName("com.fasterxml.jackson...")), as the shade plugins do;
 *   - entry paths (classes, resources, META-INF/versions/N/ multi-release entries);
 *   - META-INF/services files: their names and their lines.
 * What is dropped: signatures (META-INF/*.SF|DSA|RSA|EC), MANIFEST.MF, module-info.class (a relocated module
 *   descriptor would be wrong), and later duplicates of an entry (the first jar wins).
 * The output is deterministic: entries keep input order and carry a fixed timestamp.
 */

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.jar.Attributes;
import java.util.Enumeration;

import org.apache.xbean.asm9.ClassReader;
import org.apache.xbean.asm9.ClassWriter;
import org.apache.xbean.asm9.commons.ClassRemapper;
import org.apache.xbean.asm9.commons.Remapper;

public final class Relocate {

    /** slash form: com/fasterxml/jackson/ -> org/apache/iceberg/shaded/com/fasterxml/jackson/ */
    private final Map<String, String> slashed = new LinkedHashMap<>();
    /** dot form: com.fasterxml.jackson. -> org.apache.iceberg.shaded.com.fasterxml.jackson. */
    private final Map<String, String> dotted = new LinkedHashMap<>();

    private static final long FIXED_TIME = 315532800000L + 86400000L; // 1980-01-02, valid in zip

    void addMapping(String from, String to) {
        slashed.put(from.replace('.', '/') + "/", to.replace('.', '/') + "/");
        dotted.put(from + ".", to + ".");
    }

    /** Map a slashed internal name or path; null when nothing matches. */
    String mapSlashed(String name) {
        for (Map.Entry<String, String> e : slashed.entrySet()) {
            if (name.startsWith(e.getKey())) {
                return e.getValue() + name.substring(e.getKey().length());
            }
        }
        return null;
    }

    String mapDotted(String name) {
        for (Map.Entry<String, String> e : dotted.entrySet()) {
            if (name.startsWith(e.getKey())) {
                return e.getValue() + name.substring(e.getKey().length());
            }
        }
        return null;
    }

    /** A string constant: relocate it when it names something under a FROM prefix (either form). */
    String mapString(String value) {
        String m = mapDotted(value);
        if (m != null) return m;
        m = mapSlashed(value);
        if (m != null) return m;
        // a leading slash (resource lookups: "/com/fasterxml/jackson/...")
        if (value.startsWith("/")) {
            m = mapSlashed(value.substring(1));
            if (m != null) return "/" + m;
        }
        return value;
    }

    final Remapper remapper = new Remapper() {
        @Override
        public String map(String internalName) {
            String m = mapSlashed(internalName);
            return m == null ? internalName : m;
        }

        @Override
        public Object mapValue(Object value) {
            if (value instanceof String) {
                return mapString((String) value);
            }
            return super.mapValue(value);
        }
    };

    String mapPath(String path) {
        String prefix = "";
        String rest = path;
        if (path.startsWith("META-INF/versions/")) {
            int slash = path.indexOf('/', "META-INF/versions/".length());
            if (slash > 0) {
                prefix = path.substring(0, slash + 1);
                rest = path.substring(slash + 1);
            }
        }
        if (rest.startsWith("META-INF/services/")) {
            String service = rest.substring("META-INF/services/".length());
            String m = mapDotted(service);
            return prefix + "META-INF/services/" + (m == null ? service : m);
        }
        String m = mapSlashed(rest);
        return prefix + (m == null ? rest : m);
    }

    static boolean dropped(String name) {
        String upper = name.toUpperCase();
        if (name.equals("META-INF/MANIFEST.MF")) return true;
        if (name.endsWith("module-info.class")) return true;
        if (upper.startsWith("META-INF/") && (upper.endsWith(".SF") || upper.endsWith(".DSA")
                || upper.endsWith(".RSA") || upper.endsWith(".EC"))) return true;
        return name.endsWith("/"); // directories are implied
    }

    byte[] transform(String name, byte[] data) {
        if (name.endsWith(".class")) {
            ClassReader reader = new ClassReader(data);
            ClassWriter writer = new ClassWriter(0);
            reader.accept(new ClassRemapper(writer, remapper), 0);
            return writer.toByteArray();
        }
        if (name.contains("META-INF/services/")) {
            String text = new String(data, StandardCharsets.UTF_8);
            String[] lines = text.split("\n", -1);
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < lines.length; i++) {
                String trimmed = lines[i].trim();
                String m = trimmed.isEmpty() || trimmed.startsWith("#") ? null : mapDotted(trimmed);
                if (i > 0) out.append('\n');
                out.append(m == null ? lines[i] : m);
            }
            String result = out.toString();
            return result.getBytes(StandardCharsets.UTF_8);
        }
        return data;
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[65536];
        int n;
        while ((n = in.read(chunk)) > 0) buf.write(chunk, 0, n);
        return buf.toByteArray();
    }

    int run(String out, List<String> inputs) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(new Attributes.Name("Created-By"), "ctk Relocate");
        manifest.getMainAttributes().put(new Attributes.Name("Multi-Release"), "true");
        Set<String> seen = new HashSet<>();
        int written = 0;
        int classes = 0;
        try (JarOutputStream jar = new JarOutputStream(new FileOutputStream(out))) {
            JarEntry me = new JarEntry("META-INF/MANIFEST.MF");
            me.setTime(FIXED_TIME);
            jar.putNextEntry(me);
            manifest.write(jar);
            jar.closeEntry();
            seen.add("META-INF/MANIFEST.MF");
            for (String input : inputs) {
                try (JarFile in = new JarFile(input, false)) {
                    Enumeration<JarEntry> entries = in.entries();
                    while (entries.hasMoreElements()) {
                        JarEntry entry = entries.nextElement();
                        String name = entry.getName();
                        if (dropped(name)) continue;
                        String target = mapPath(name);
                        if (!seen.add(target)) continue;
                        byte[] data;
                        try (InputStream is = in.getInputStream(entry)) {
                            data = transform(name, readAll(is));
                        }
                        JarEntry o = new JarEntry(target);
                        o.setTime(FIXED_TIME);
                        jar.putNextEntry(o);
                        jar.write(data);
                        jar.closeEntry();
                        written++;
                        if (name.endsWith(".class")) classes++;
                    }
                }
            }
        }
        System.out.println("relocated " + classes + " classes, " + written + " entries into " + out);
        return 0;
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: Relocate OUT.jar --map FROM=TO [--map FROM=TO ...] IN.jar...");
            System.exit(2);
        }
        Relocate r = new Relocate();
        String out = args[0];
        List<String> inputs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--map") && i + 1 < args.length) {
                String[] parts = args[++i].split("=", 2);
                if (parts.length != 2) {
                    System.err.println("bad --map " + args[i]);
                    System.exit(2);
                }
                r.addMapping(parts[0], parts[1]);
            } else {
                inputs.add(args[i]);
            }
        }
        System.exit(r.run(out, inputs));
    }
}
